"""Stage ``recon``: the reconstruction-convergence proxy (claim 3). Each held-out test crop is fitted with K
Gaussians (Adam on the raw parameters, MSE) from two starts: the pretrained MedGMAE decoder's prediction from the
crop's visible tokens (``recon.mask_ratio`` masked, as in pretraining), and a random draw of the untrained heads'
distribution; the iterations until the PSNR reaches ``recon.target_psnr`` are counted (a fit that does not reach
it within ``recon.iters`` is censored at the cap).

Writes ``data/medgmae/recon/fits.jsonl`` (one row per volume and start) and ``examples.npz`` (slices for the report).
"""

from __future__ import annotations

import numpy as np
import torch

from components.io import write_jsonl
from components.medgmae import fit as FT
from components.medgmae import model as M
from components.training.threads import set_threads
from flows.medgmae.common import log
from flows.medgmae.data import load
from flows.medgmae.params import Params
from flows.medgmae.pretrain import EVAL_MASK_SEED, run_name
from flows.medgmae.spec import PRETRAIN, RECON
from flows.runtime.stages import StageContext


def run(ctx: StageContext[Params]) -> dict:
    p, r = ctx.params, ctx.params.recon
    set_threads(p.resources.threads)
    pool = load(ctx)
    vols = torch.as_tensor(pool["test_x"][: r.volumes])
    seed0 = p.pretrain.seeds[0]
    gmae = M.load_model(ctx.input(f"{PRETRAIN}/{run_name('medgmae', seed0)}"))
    vmae = M.load_model(ctx.input(f"{PRETRAIN}/{run_name('voxel-mae', seed0)}"))
    cfg = gmae.config
    g = torch.Generator().manual_seed(r.seed)
    keep, mask = M.random_mask(len(vols), cfg.n_tokens, r.mask_ratio, g)
    with torch.no_grad():
        raw = gmae.decoder.heads.raw(gmae.decoder.query_tokens(gmae.encoder(vols, keep), keep))
        warm_render = gmae.reconstruct(vols, keep)
        voxel_render = vmae.reconstruct(vols, keep)
    rows = []
    for i in range(len(vols)):
        target = vols[i, 0]
        starts = {
            "pretrained": {k: v[i] for k, v in raw.items()},
            "random": FT.random_raw(cfg.n_gaussians, torch.Generator().manual_seed(r.seed * 1000 + i)),
        }
        for name, init in starts.items():
            res = FT.fit(target, init, iters=r.iters, lr=r.lr, gain=cfg.gain, target_psnr=r.target_psnr)
            rows.append({"volume": i, "start": name, "iters": res.iters_to_target,
                         "censored": res.iters_to_target is None, "start_psnr": res.psnr[0],
                         "final_psnr": res.final_psnr, "psnr_every": max(1, len(res.psnr) // 60),
                         "psnr": res.psnr[:: max(1, len(res.psnr) // 60)]})  # fmt: skip
    out = ctx.output_dir(RECON)
    write_jsonl(out / "fits.jsonl", rows)
    vm = M.voxel_mask(mask, cfg.grid, cfg.patch)
    n = min(4, len(vols))
    np.savez_compressed(out / "examples.npz", input=vols[:n].numpy(), mask=vm[:n].numpy(),
                        gaussian=warm_render[:n].numpy(), voxel=voxel_render[:n].numpy(),
                        eval_mask_seed=np.asarray(EVAL_MASK_SEED))  # fmt: skip
    summary = {}
    for name in ("pretrained", "random"):
        sel = [x for x in rows if x["start"] == name]
        summary[name] = {"reached": sum(not x["censored"] for x in sel), "of": len(sel),
                         "median_final_psnr": float(np.median([x["final_psnr"] for x in sel]))}  # fmt: skip
    log.info("medgmae recon: %s", summary)
    return summary
