"""dka's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import Layout, Paper

PAPER = Paper(
    13, "dka", "Dual-Kernel Adapter: widening the receptive field for low-data medical adaptation", "13-dka.md"
)

L = Layout("dka", code=("common",))
DATA, PRETRAIN, ADAPT = L.out("data"), L.out("pretrain"), L.out("adapt")
_C = "components/dka"

STAGES = (
    L.stage(
        "data",
        code=(f"{_C}/mni.py", f"{_C}/sources.py", "components/data/mni152.py", "components/data/validate.py"),
        params=("data",),
        writes=(DATA,),
        summary="MNI152 axial slices with a synthetic lesion (4 labels), train/dev/test pools "
        "from disjoint slices, label-fraction draws per seed; GX checks",
    ),
    L.stage(
        "pretrain",
        code=(f"{_C}/vit.py", f"{_C}/sources.py", "components/models/vit_blocks.py"),
        params=("data.fashion_dir", "pretrain"),
        writes=(PRETRAIN,),
        summary="tiny ViT pretrained on Fashion-MNIST once (safetensors + MLflow model)",
    ),
    L.stage(
        "adapt",
        code=(_C, "components/models/vit_blocks.py", "components/training/curves.py"),
        reads=(DATA, PRETRAIN),
        params=("adapt", "resources", "claims.low_fraction"),
        writes=(ADAPT,),
        after=("data", "pretrain"),
        summary="lr sweep on the dev split, then every method x fraction x seed: test metrics and ERF",
    ),
    L.report_stage(
        reads=(ADAPT,),
        params=("adapt",),
        plots={
            "accuracy.csv": {"x": "fraction", "y": "acc", "template": "scatter", "color": "method"},
            "erf.csv": {"x": "erf_area", "y": "method", "template": "bar_horizontal"},
        },
        after=("adapt",),
        summary="claims 1-4 with verdicts; accuracy vs label fraction, ERF maps",
    ),
)
