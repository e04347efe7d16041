"""OpenCV's pretrained HOG + linear SVM people detector (Dalal & Triggs), used zero-shot.

Its window is 64 x 128 px with the person about 96 px tall inside a 16 px margin, so small images are
upscaled first, and each window is shrunk to the canonical person extent inside it (a fixed geometric
calibration from the window layout, not fitted to our data; ``calibrate=False`` keeps raw windows).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Dalal-Triggs window: person ~ 96 of 128 px tall (centred), ~ 40 of 64 px wide
PERSON_IN_WINDOW = (40 / 64, 96 / 128)


@dataclass(frozen=True)
class HogConfig:
    upscale: float = 3.0
    win_stride: int = 8
    scale: float = 1.05
    hit_threshold: float = -0.5  # below OpenCV's 0 so the score range is wide enough for an AP curve
    group_threshold: int = 1
    calibrate: bool = True


def _detector():
    import cv2

    hog = cv2.HOGDescriptor()
    hog.setSVMDetector(cv2.HOGDescriptor_getDefaultPeopleDetector())
    return hog


def detect(images: np.ndarray, cfg: HogConfig = HogConfig()) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per RGB uint8 image: (boxes [x, y, w, h] in the image's pixels, SVM scores)."""
    import cv2

    hog = _detector()
    out = []
    for img in images:
        big = cv2.resize(
            np.ascontiguousarray(img[..., ::-1]), None, fx=cfg.upscale, fy=cfg.upscale, interpolation=cv2.INTER_LINEAR
        )
        rects, weights = hog.detectMultiScale(
            big,
            hitThreshold=cfg.hit_threshold,
            winStride=(cfg.win_stride, cfg.win_stride),
            padding=(8, 8),
            scale=cfg.scale,
            groupThreshold=cfg.group_threshold,
        )
        boxes = np.asarray(rects, float).reshape(-1, 4) / cfg.upscale
        scores = np.asarray(weights, float).reshape(-1)
        if cfg.calibrate and len(boxes):
            fw, fh = PERSON_IN_WINDOW
            cx, cy = boxes[:, 0] + boxes[:, 2] / 2, boxes[:, 1] + boxes[:, 3] / 2
            w, h = boxes[:, 2] * fw, boxes[:, 3] * fh
            boxes = np.c_[cx - w / 2, cy - h / 2, w, h]
        out.append((boxes, scores))
    return out


def video_frames(path: str, n: int, stride: int) -> np.ndarray:
    """Up to ``n`` RGB frames of a video, one every ``stride``; (0, ...) if it cannot be read."""
    import cv2

    cap = cv2.VideoCapture(path)
    frames, i = [], 0
    while len(frames) < n:
        ok, f = cap.read()
        if not ok:
            break
        if i % stride == 0:
            frames.append(f[..., ::-1].copy())
        i += 1
    cap.release()
    return np.stack(frames) if frames else np.zeros((0, 1, 1, 3), np.uint8)
