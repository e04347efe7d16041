"""Stage ``report``: claims 1-3 with verdicts; Dice per label fraction and init with CIs over seeds; slices of the
input, the masked input and both reconstructions; the fit iterations of claim 3; the pretraining curves."""

from __future__ import annotations

import numpy as np

from components.evaluation.seed_ci import t_interval
from components.inputs import load_npz
from components.io import read_json, read_jsonl
from components.reporting import Section
from components.reporting.plots import errorbar_plot, line_plot, new_figure
from flows.medgmae.claims import CLAIMS, claim1, claim2, claim3, index_runs
from flows.medgmae.params import Params
from flows.medgmae.spec import DATA, FINETUNE, PRETRAIN, RECON
from flows.runtime.report_stage import finish_report
from flows.runtime.stages import StageContext


def dice_table(p, runs: list[dict]) -> list[dict]:
    """Mean Dice over seeds per (fraction, init), with a t-interval over the per-seed means."""
    idx = index_runs(runs)
    rows = []
    for fr in p.finetune.fractions:
        for init in p.finetune.inits:
            per = [idx[(init, float(fr), s)] for s in p.finetune.seeds if (init, float(fr), s) in idx]
            if not per:
                continue
            m = np.array([r["mean_dice"] for r in per])
            lo, hi = t_interval(m, p.claims.level) if len(m) > 1 else (float(m[0]), float(m[0]))
            rows.append({
                "fraction": float(fr), "init": init, "seeds": len(per), "n_train": per[0]["n_train"],
                "dice": float(m.mean()), "ci_low": float(lo), "ci_high": float(hi),
                "dice GM": float(np.mean([r["dice_per_class"][0] for r in per])),
                "dice WM": float(np.mean([r["dice_per_class"][1] for r in per])) if len(per[0]["dice_per_class"]) > 1
                else None,
                "lr": per[0]["lr"], "loss first/last": f"{np.mean([r['first_loss'] for r in per]):.3f} / "
                f"{np.mean([r['final_loss'] for r in per]):.3f}",
            })  # fmt: skip
    return rows


def _slices(ex: dict) -> object:
    """Axial slices (the one with the most signal):
    input, masked input, voxel-MAE and Gaussian (MedGMAE) reconstructions, per example."""
    n = len(ex["input"])
    fig = new_figure(8.0, 2.0 * n + 0.4)
    cols = (
        ("input", ex["input"]),
        ("masked input", ex["input"] * (1 - ex["mask"])),
        ("voxel MAE", ex["voxel"]),
        ("MedGMAE (Gaussians)", ex["gaussian"]),
    )
    z = int(np.argmax(ex["input"].mean(axis=(0, 1, 2, 3))))  # the axial slice with the most signal (test crops sit
    # at the top of the brain, so the middle slice can be empty)
    for i in range(n):
        for j, (title, vol) in enumerate(cols):
            ax = fig.add_subplot(n, len(cols), i * len(cols) + j + 1)
            ax.imshow(np.clip(vol[i, 0, :, :, z], 0, 1).T, cmap="gray", vmin=0, vmax=1, origin="lower")
            ax.set_xticks([])
            ax.set_yticks([])
            if i == 0:
                ax.set_title(title, fontsize=8)
    return fig


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    runs = read_jsonl(ctx.input(f"{FINETUNE}/runs.jsonl"))
    sweep = read_jsonl(ctx.input(f"{FINETUNE}/sweep.jsonl"))
    pre = read_json(ctx.input(f"{PRETRAIN}/pretrain.json"), {"runs": list})["runs"]
    fits = read_jsonl(ctx.input(f"{RECON}/fits.jsonl"))
    summary = read_json(ctx.input(f"{DATA}/summary.json"), kind=dict)
    with load_npz(ctx.input(f"{RECON}/examples.npz")) as z:
        ex = {k: z[k] for k in ("input", "mask", "voxel", "gaussian")}
    results = [claim1(p, runs, pre), claim2(p, runs, pre), claim3(p, fits)]

    table = dice_table(p, runs)
    names = [f"{r['init']} @ {r['fraction']:g} ({r['n_train']} crops)" for r in table]
    fig_dice = errorbar_plot(names, [r["dice"] for r in table], [r["ci_low"] for r in table],
                             [r["ci_high"] for r in table], xlabel="mean foreground Dice (GM, WM)",
                             title="Dice per label fraction and init (95% t-interval over seeds)",
                             reference=None)  # fmt: skip
    pre_rows = [{k: r[k] for k in ("objective", "seed", "steps", "masked_loss_untrained", "masked_loss_trained",
                                   "final_train_loss", "plateau", "seconds", "cpu_seconds")} for r in pre]  # fmt: skip
    fig_pre = line_plot(
        {f"{r['objective']}-s{r['seed']}": (list(range(len(r["losses"]))), r["losses"]) for r in pre},
        xlabel="step",
        ylabel="masked-voxel MSE (training batch)",
        title="Pretraining loss",
    )
    recon_rows = [{"volume": f["volume"], "start": f["start"], "iters": f["iters"] if f["iters"] is not None else
                   p.recon.iters, "censored": f["censored"], "start PSNR": f["start_psnr"],
                   "final PSNR": f["final_psnr"]} for f in fits]  # fmt: skip
    fig_fit = line_plot(
        {
            f"{f['start']} v{f['volume']}": ([i * f["psnr_every"] for i in range(len(f["psnr"]))], f["psnr"])
            for f in fits
            if f["volume"] < 3
        },
        xlabel="fit iteration",
        ylabel="PSNR (dB)",
        title=f"Gaussian fits of held-out crops (target {p.recon.target_psnr:g} dB)",
    )
    sections = [
        Section(
            "Data",
            f"MNI152 2 mm crops of {summary['size']}^3; test crops start at z >= {summary['test_cut_z']} "
            f"(top slab), training crops end below it. Train / dev / test: {summary['n_train']} / {summary['n_dev']}"
            f" / {summary['n_test']} crops; {summary['phantoms']} phantoms in the pretraining pool. Label shares "
            f"(other, GM, WM) train {np.round(summary['train_label_share'], 3).tolist()}, test "
            f"{np.round(summary['test_label_share'], 3).tolist()}.",
        ),
        Section(
            "Pretraining",
            "Masked-voxel MSE on held-out test crops (the same masks) before and after pretraining; the same "
            "steps, batch, learning rate and schedule for both objectives.",
            figures=[("pretrain", fig_pre, "training loss per step")],
            tables=[pre_rows],
        ),
        Section(
            "Reconstructions",
            "Axial slices of held-out crops (the slice with the most signal): "
            "input, masked input (75% of tokens hidden), and both decoders' "
            "reconstructions from the visible tokens.",
            figures=[("slices", _slices(ex), "input / masked / voxel MAE / MedGMAE")],
        ),
        Section(
            "Dice",
            "Mean foreground Dice (MONAI DiceMetric, GM and WM) on the test slab per label fraction and init; the "
            "learning rate of each init was chosen on dev at the low fraction (same grid for all).",
            figures=[("dice", fig_dice, "Dice per label fraction with 95% CIs over seeds")],
            tables=[table, [{k: r[k] for k in ("init", "lr", "mean_dice")} for r in sweep]],
        ),
        Section(
            "Reconstruction convergence",
            "Iterations until the Gaussian fit reaches the target PSNR (censored at the cap).",
            figures=[("fits", fig_fit, "PSNR during the fits (three volumes)")],
            tables=[recon_rows],
        ),
    ]
    metrics = {
        "dice": {f"{r['init']}_f{r['fraction']:g}": r["dice"] for r in table},
        "masked_loss": {f"{r['objective']}-s{r['seed']}": r["masked_loss_trained"] for r in pre},
    }
    plots = {
        "dice.csv": (
            [{"fraction": r["fraction"], "init": r["init"], "dice": r["dice"]} for r in table],
            ["fraction", "init", "dice"],
        ),
        "recon.csv": (
            [{"volume": r["volume"], "start": r["start"], "iters": r["iters"]} for r in recon_rows],
            ["volume", "start", "iters"],
        ),
    }
    return finish_report(ctx, CLAIMS, results, metrics=metrics, sections=sections, plots=plots)
