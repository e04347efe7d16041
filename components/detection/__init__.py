"""Person detection: COCO box evaluation with per-ground-truth ignore flags, a tiny CenterNet, OpenCV's HOG."""
