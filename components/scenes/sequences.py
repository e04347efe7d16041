"""Sequences of frames: one layout per sequence, a jittered camera crop per frame, and per-person
annotations (full-body box, visible box, pose, visibility ratio and bin) measured on the crop."""

from __future__ import annotations

import numpy as np

from components.scenes.compose import DOMAINS, MIN_VISIBILITY, DomainSpec, compose, visibility_bin


def box_of(mask: np.ndarray) -> list[float] | None:
    """[x, y, w, h] of a bool mask in COCO pixel convention (w = right - left + 1), or None if empty."""
    ys, xs = np.nonzero(mask)
    if ys.size == 0:
        return None
    return [float(xs.min()), float(ys.min()), float(xs.max() - xs.min() + 1), float(ys.max() - ys.min() + 1)]


def _too_hidden(spec, ids, persons) -> bool:
    return any((ids == i + 1).sum() < spec.min_visibility * m.sum() for i, (_, m) in enumerate(persons))


def _layout(rng, domain: str, canvas: int, margin: int, spec=None):
    """A layout; where the domain sets a minimum visibility (urban), the same layout is redrawn with fewer front
    occluders, then new layouts are drawn, until every person keeps it."""
    spec = spec or DOMAINS[domain]
    for _ in range(20):
        state = rng.bit_generator.state
        rgb, ids, persons = compose(rng, spec, canvas, margin)
        for cap in range(6, -1, -1):
            if spec.min_visibility <= MIN_VISIBILITY or not _too_hidden(spec, ids, persons):
                return rgb, ids, persons
            after = rng.bit_generator.state
            rng.bit_generator.state = state
            rgb, ids, persons = compose(rng, spec, canvas, margin, n_occluder_cap=cap)
            rng.bit_generator.state = after
    raise RuntimeError(f"{domain}: no layout met min_visibility {spec.min_visibility} in 20 draws")


def generate_sequence(
    seed: int, domain: str, *, n_frames: int, size: int, jitter: int, spec: DomainSpec | None = None
) -> list[dict]:
    """``n_frames`` frames of one sequence: {"image": uint8 (size, size, 3), "annotations": [...]}.

    The layout is drawn on a (size + 2 * jitter) canvas with people kept ``jitter`` + 1 px inside it, and each
    frame crops it at a random-walk offset (camera shake) with brightness and sensor-noise jitter. ``spec``
    replaces the named domain's :class:`DomainSpec` (a custom domain).
    """
    if spec is None and domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r}; use one of {sorted(DOMAINS)}")
    rng = np.random.default_rng(seed)
    canvas = size + 2 * jitter
    rgb, ids, persons = _layout(rng, domain, canvas, margin=2 * jitter + 1, spec=spec)
    oy = ox = jitter
    frames = []
    for _ in range(n_frames):
        oy = int(np.clip(oy + rng.integers(-2, 3), 0, 2 * jitter))
        ox = int(np.clip(ox + rng.integers(-2, 3), 0, 2 * jitter))
        crop = rgb[oy : oy + size, ox : ox + size] * rng.uniform(0.88, 1.12)
        crop = crop + rng.normal(0, 0.012, crop.shape)
        image = (np.clip(crop, 0, 1) * 255).round().astype(np.uint8)
        anns = []
        for pid, (pose, full) in enumerate(persons, start=1):
            f = full[oy : oy + size, ox : ox + size]
            v = ids[oy : oy + size, ox : ox + size] == pid
            n_full = int(f.sum())
            ratio = float(v.sum()) / n_full if n_full else 0.0
            if n_full == 0 or ratio < MIN_VISIBILITY:
                continue
            anns.append(
                {
                    "track": pid,
                    "bbox": box_of(f),
                    "vis_bbox": box_of(v),
                    "pose": pose,
                    "vis_ratio": round(ratio, 4),
                    "visibility": visibility_bin(ratio),
                    "area": float(n_full),
                }
            )
        frames.append({"image": image, "annotations": anns})
    return frames


def generate_set(
    domain: str,
    *,
    n_sequences: int,
    n_frames: int,
    size: int,
    jitter: int,
    seed: int,
    prefix: str,
    spec: DomainSpec | None = None,
) -> tuple[np.ndarray, list[dict], list[dict]]:
    """A domain's set: images (N, size, size, 3) uint8, image records and annotation records (COCO-like,
    ``bbox`` = full-body box, ``vis_bbox`` = visible extent). Sequence ``k`` is seeded by (seed, k)."""
    images, recs, anns = [], [], []
    for k in range(n_sequences):
        seq_seed = int(np.random.SeedSequence([seed, k]).generate_state(1)[0])
        for t, fr in enumerate(
            generate_sequence(seq_seed, domain, n_frames=n_frames, size=size, jitter=jitter, spec=spec)
        ):
            image_id = len(images)
            images.append(fr["image"])
            recs.append(
                {
                    "id": image_id,
                    "file_name": f"{prefix}-{k:04d}-{t:02d}",
                    "sequence": f"{prefix}-{k:04d}",
                    "frame": t,
                    "domain": domain,
                    "width": size,
                    "height": size,
                }
            )
            for a in fr["annotations"]:
                anns.append({"id": len(anns) + 1, "image_id": image_id, "category_id": 1, "iscrowd": 0, **a})
    arr = np.stack(images) if images else np.zeros((0, size, size, 3), np.uint8)
    return arr, recs, anns
