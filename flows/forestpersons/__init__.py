"""forestpersons: ForestPersons: an under-canopy missing-person detection benchmark (card 04).

The benchmark's protocol on procedural scenes (components.scenes): sequence-level difficulty tiers and split,
OpenCV's pretrained HOG zero-shot, a tiny CenterNet trained per domain and seed (components.detection), COCO
metrics with subset ignore-flags, recall at 1 FPPI, and claims 1-4 of the card.
"""
