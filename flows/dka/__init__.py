"""dka: Dual-Kernel Adapter (large + small depthwise kernels in a bottleneck adapter) against linear probing,
full fine-tuning, the bottleneck adapter, Convpass and LoRA on a frozen tiny ViT, in low-data regimes of an
MNI152 lesion task; the ERF diagnostic (card: ``../shared/papers/13-dka.md``)."""
