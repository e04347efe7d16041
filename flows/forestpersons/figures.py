"""The report's figures: AP per training domain, AP against visibility, AP per pose, scene panels."""

from __future__ import annotations

import numpy as np

from components.reporting.plots import PALETTE, new_figure

GROUPS = ("forest", "urban", "aerial", "pretrained")
LABEL = {
    "forest": "CenterNet: forest",
    "urban": "CenterNet: urban",
    "aerial": "CenterNet: aerial",
    "pretrained": "OpenCV HOG (zero-shot)",
}


def _mean_sd(rows, domain, kind, subset, key="ap"):
    v = [
        r[key]
        for r in rows
        if r["domain"] == domain
        and r["kind"] == kind
        and r["subset"] == subset
        and r["test_set"] == "forest"
        and r[key] is not None
    ]
    return (float(np.mean(v)), float(np.std(v)), len(v)) if v else (np.nan, 0.0, 0)


def ap_by_domain(rows):
    fig = new_figure(6.4, 3.4)
    ax = fig.add_subplot()
    stats = [_mean_sd(rows, g, "all", "None") for g in GROUPS]
    ax.barh(
        [LABEL[g] for g in GROUPS],
        [s[0] for s in stats],
        xerr=[s[1] for s in stats],
        color=[PALETTE[i] for i in range(len(GROUPS))],
    )
    ax.set_xlabel("AP@[.5:.95] on forest test images (mean ± sd over seeds)")
    ax.set_title("AP per training domain")
    return fig


def ap_by_subset(rows, kind: str, values, xlabel: str, title: str, line: bool):
    fig = new_figure(6.4, 3.6)
    ax = fig.add_subplot()
    x = np.arange(len(values))
    for i, g in enumerate(GROUPS):
        m = [_mean_sd(rows, g, kind, str(v))[0] for v in values]
        if line:
            ax.plot(x, m, marker="o", label=LABEL[g], color=PALETTE[i])
        else:
            ax.bar(x + (i - 1.5) * 0.2, m, width=0.2, label=LABEL[g], color=PALETTE[i])
    ax.set_xticks(x, [str(v) for v in values])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("subset AP@[.5:.95]")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return fig


def _draw_boxes(ax, boxes, colour, lw=1.0, dashed=False):
    from matplotlib.patches import Rectangle

    for x, y, w, h in np.asarray(boxes).reshape(-1, 4):
        ax.add_patch(
            Rectangle((x, y), w, h, fill=False, edgecolor=colour, linewidth=lw, linestyle="--" if dashed else "-")
        )


def scene_panel(images, gts, dets: dict[str, list], threshold: float, title: str):
    """Test scenes with ground truth (green: full body, dashed: visible) and detections above ``threshold``."""
    n = len(images)
    cols = min(n, 3)
    rows = int(np.ceil(n / cols))
    fig = new_figure(3.0 * cols, 3.1 * rows)
    colours = {name: c for name, c in zip(dets, ("red", "deepskyblue", "orange"))}
    for i in range(n):
        ax = fig.add_subplot(rows, cols, i + 1)
        ax.imshow(images[i])
        for a in gts[i]:
            _draw_boxes(ax, a["bbox"], "lime", 1.2)
            if a.get("vis_bbox"):
                _draw_boxes(ax, a["vis_bbox"], "lime", 0.8, dashed=True)
        for name, d in dets.items():
            b, s = d[i]
            _draw_boxes(ax, b[s >= threshold], colours[name], 1.0)
        ax.set_title(", ".join(f"{a['pose'][:3]}/{a['visibility']}" for a in gts[i]) or "-", fontsize=8)
        ax.axis("off")
    fig.suptitle(
        title + "  (green GT, dashed visible box; " + ", ".join(f"{c}: {k}" for k, c in colours.items()) + ")",
        fontsize=8,
    )
    return fig


def video_panel(frames, hog, cn):
    n = len(frames)
    fig = new_figure(3.2 * min(n, 3), 2.6 * int(np.ceil(n / 3)))
    for i in range(n):
        ax = fig.add_subplot(int(np.ceil(n / 3)), min(n, 3), i + 1)
        ax.imshow(frames[i])
        _draw_boxes(ax, hog[i], "red", 1.0)
        _draw_boxes(ax, cn[i], "deepskyblue", 1.0)
        ax.axis("off")
    fig.suptitle("vtest.avi: OpenCV HOG (red), forest-trained CenterNet at score >= 0.3 (blue)", fontsize=8)
    return fig


def learning_curves(runs: list[dict], histories: dict[str, dict]):
    """Per detector: the training loss per step (a 20-step moving mean) and the forest-dev AP after each epoch."""
    fig = new_figure(9.6, 3.4)
    ax_l, ax_d = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    colour = {g: PALETTE[i] for i, g in enumerate(GROUPS)}
    for r in runs:
        h = histories[r["name"]]
        loss = np.asarray(h.get("step_loss") or h["loss"], float)
        k = min(20, len(loss))
        smooth = np.convolve(loss, np.ones(k) / k, mode="valid")
        ax_l.plot(np.arange(len(smooth)) + k, smooth, color=colour[r["domain"]], lw=0.9, label=r["name"])
        dev = h.get("dev_ap") or []
        ax_d.plot(np.arange(1, len(dev) + 1), dev, marker="o", ms=3, color=colour[r["domain"]], lw=0.9)
    ax_l.set_xlabel("step")
    ax_l.set_ylabel("training loss (20-step mean)")
    ax_l.set_yscale("log")
    ax_l.legend(fontsize=6, ncol=2)
    ax_d.set_xlabel("epoch")
    ax_d.set_ylabel("AP@[.5:.95] on the forest dev split")
    fig.suptitle("Learning curves (colour: training domain)", fontsize=9)
    return fig
