"""CER-GOD: a DOMINANT-style graph autoencoder on a learned, reweighted adjacency, with a DEC clustering detector.

Per-edge logits M give weights sigma(M) (one per undirected edge, so A~ stays symmetric); the GCN encoder runs
on A~ = sigma(M) * A. After ``warmup`` reconstruction-only epochs, two centres are initialised by k-means
(scikit-learn) on the embeddings and the loss becomes L = l_r + alpha l_c + beta l_dr + gamma l_div:
l_c = KL(P || Q) (DEC), l_dr = -MMD^2 between majority (normal) and minority (outlier) first-layer
representations on a Chebyshev-distance Gaussian kernel, l_div = sum_k max(0, eps - mean_i q_ik).
With ``dr_mask_only`` the repulsion's gradient reaches only M (the spoiler), the card's reading.
Scores are 1 - q_i,pos (pos = the majority cluster); labels are the pseudo-labels, with no threshold
(:func:`detect`, the one scoring function). A trained model is saved as a folder (``config.json`` +
``model.safetensors``, :func:`save_detector`) and loaded without unpickling (:func:`load_detector`).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from components.errors import DataError, ParamsError
from components.graph.clustering import diversity_loss, kl_loss, mmd2, soft_assign, target_distribution
from components.graph.gcn import GCN, gcn_norm
from components.graph.graph import Graph
from components.graph.recon import Prepared, _epochs, attribute_error, prepare, structure_error
from components.io import model_files

log = logging.getLogger(__name__)


CLUSTER_INPUTS = {
    "errors": "the per-node [attribute error, structure error], standardised over nodes (default)",
    "embedding": "the GCN embedding z (the card's literal reading; its 2 clusters follow communities)",
    "residual": "[x - x^, structure error] (a variant)",
}


@dataclass
class CerGodConfig:
    """Hyper-parameters (the card leaves sigma, eps, alpha, beta, gamma and the mask init open: see README)."""

    epochs: int = 200
    warmup: int = 50
    lr: float = 5e-3
    mask_lr: float = 5e-2
    hid: int = 32
    recon_weight: float = 0.5
    alpha: float = 1.0
    beta: float = 1.0
    gamma: float = 1.0
    eps: float = 0.02
    div_temperature: float = 0.1  # l_div's usage on q^(1/T): 1 = the card's soft usage (see clustering.py)
    sigma: float = 0.0  # <= 0: median heuristic on the sampled Chebyshev distances
    mask_init: float = 3.0
    mmd_max: int = 256
    cluster_input: str = "errors"  # what DEC clusters: see CLUSTER_INPUTS
    use_mask: bool = True
    dr_mask_only: bool = True
    collapse_share: float = 0.01
    neg_samples: int = 32
    progress: bool = False

    def check(self) -> CerGodConfig:
        if not 0 <= self.warmup < self.epochs:
            raise ParamsError(f"cergod.warmup: must be in [0, epochs={self.epochs}), got {self.warmup}")
        for k in ("alpha", "beta", "gamma", "eps", "lr", "mask_lr"):
            if getattr(self, k) < 0:
                raise ParamsError(f"cergod.{k}: must be >= 0, got {getattr(self, k)}")
        if not 0 < self.div_temperature <= 1:
            raise ParamsError(f"cergod.div_temperature: must be in (0, 1], got {self.div_temperature}")
        if self.cluster_input not in CLUSTER_INPUTS:
            raise ParamsError(f"cergod.cluster_input: one of {list(CLUSTER_INPUTS)}, got {self.cluster_input!r}")
        if not 0 <= self.recon_weight <= 1:
            raise ParamsError(f"cergod.recon_weight: must be in [0, 1], got {self.recon_weight}")
        return self


class CerGod(nn.Module):
    """Encoder, DOMINANT decoders, two cluster centres and the spoiler's edge logits."""

    def __init__(self, in_dim: int, n_undirected: int, cfg: CerGodConfig):
        super().__init__()
        cdim = {"errors": 2, "embedding": cfg.hid, "residual": in_dim + 1}[cfg.cluster_input]
        self.encoder = GCN([in_dim, cfg.hid, cfg.hid])
        self.attr_decoder = GCN([cfg.hid, cfg.hid, in_dim])
        self.struct_decoder = GCN([cfg.hid, cfg.hid])
        self.centres = nn.Parameter(torch.zeros(2, cdim))
        self.mask_logits = nn.Parameter(torch.full((n_undirected,), float(cfg.mask_init)))

    def edge_weights(self, und: torch.Tensor, use_mask: bool) -> torch.Tensor | None:
        return torch.sigmoid(self.mask_logits)[und] if use_mask else None


def _repulsion(model: CerGod, p: Prepared, norm, q: torch.Tensor, cfg: CerGodConfig, gen: torch.Generator):
    """-MMD^2 between first-layer representations of the two pseudo-label groups (subsampled)."""
    labels = q.detach().argmax(1)
    pos = int(torch.bincount(labels, minlength=2).argmax())
    groups = [torch.nonzero(labels == pos).ravel(), torch.nonzero(labels != pos).ravel()]
    if min(g.numel() for g in groups) < 2:
        return torch.zeros(())
    groups = [g[torch.randperm(g.numel(), generator=gen)[: cfg.mmd_max]] for g in groups]
    h1 = torch.relu(model.encoder.layers[0](p.x, p.edge_index, norm, detach_weights=cfg.dr_mask_only))
    a, b = h1[groups[0]], h1[groups[1]]
    sigma = cfg.sigma
    if sigma <= 0:
        sigma = float(torch.cdist(a.detach(), b.detach(), p=float("inf")).median()) or 1.0
    return -mmd2(a, b, sigma)


def _init_centres(model: CerGod, z: torch.Tensor, seed: int) -> None:
    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=2, n_init=10, random_state=seed).fit(z.detach().numpy())
    model.centres.data = torch.as_tensor(km.cluster_centers_, dtype=torch.float32)


def _forward(model: CerGod, p: Prepared, norm, cfg: CerGodConfig, gen: torch.Generator):
    """(per-node reconstruction loss l_r, the features the clustering detector sees)."""
    z = model.encoder(p.x, p.edge_index, norm)
    x_hat = model.attr_decoder(z, p.edge_index, norm)
    s_err = structure_error(model.struct_decoder(z, p.edge_index, norm), p, gen, cfg.neg_samples)
    a_err = attribute_error(p.x, x_hat)
    recon = cfg.recon_weight * a_err + (1 - cfg.recon_weight) * s_err
    if cfg.cluster_input == "errors":
        feats = standardise(torch.stack([a_err, s_err], 1))
    elif cfg.cluster_input == "embedding":
        feats = z
    else:
        feats = torch.cat([p.x - x_hat, s_err.unsqueeze(1)], 1)
    return recon, feats


def standardise(e: torch.Tensor) -> torch.Tensor:
    """Each column minus its mean over nodes, over its std (the statistics are constants: no gradient)."""
    mu, sd = e.detach().mean(0, keepdim=True), e.detach().std(0, keepdim=True)
    return (e - mu) / torch.clamp(sd, min=1e-8)


def fit_cergod(g: Graph, p: Prepared, cfg: CerGodConfig, seed: int) -> dict:
    """Train CER-GOD; return scores, pseudo-labels, minority share, collapse flag, edge weights, loss parts."""
    cfg.check()
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    pairs, und = g.undirected()
    und_t = torch.as_tensor(und, dtype=torch.long)
    model = CerGod(p.x.shape[1], len(pairs), cfg)
    rest = [q for n_, q in model.named_parameters() if n_ != "mask_logits"]
    opt = torch.optim.Adam([{"params": rest, "lr": cfg.lr}, {"params": [model.mask_logits], "lr": cfg.mask_lr}])
    t0, parts = time.perf_counter(), {}
    for epoch in _epochs(cfg.epochs, cfg.progress, "cer-god"):
        opt.zero_grad()
        norm = gcn_norm(p.edge_index, model.edge_weights(und_t, cfg.use_mask), p.n)
        recon, feats = _forward(model, p, norm, cfg, gen)
        loss = recon.mean()
        parts = {"recon": float(loss.detach())}
        if epoch >= cfg.warmup:
            if epoch == cfg.warmup:
                _init_centres(model, feats, seed)
            q = soft_assign(feats, model.centres)
            l_c, l_div = kl_loss(target_distribution(q), q), diversity_loss(q, cfg.eps, cfg.div_temperature)
            l_dr = _repulsion(model, p, norm, q, cfg, gen) if cfg.use_mask and cfg.beta > 0 else torch.zeros(())
            loss = loss + cfg.alpha * l_c + cfg.beta * l_dr + cfg.gamma * l_div
            parts.update(cluster=float(l_c.detach()), repulsion=float(l_dr.detach()), diversity=float(l_div.detach()))
        loss.backward()
        opt.step()
    return _outputs(model, p, und_t, pairs, cfg, parts, time.perf_counter() - t0, gen)


def detect(model: CerGod, p: Prepared, und_t: torch.Tensor, cfg: CerGodConfig, gen: torch.Generator) -> dict:
    """CER-GOD's detector on a trained model: ``scores`` 1 - q_i,pos (pos = the majority cluster), ``labels``
    (1 = the minority cluster's pseudo-label, no threshold) and ``minority_share``.

    The one scoring function: :func:`fit_cergod` scores its runs with it and the champion's re-evaluation
    (:meth:`CerGodDetector.score`, ``flows/cer_god/champion.py``) calls it on the loaded model, so a change to
    how CER-GOD scores nodes reaches both.
    """
    with torch.no_grad():
        norm = gcn_norm(p.edge_index, model.edge_weights(und_t, cfg.use_mask), p.n)
        q = soft_assign(_forward(model, p, norm, cfg, gen)[1], model.centres)
        labels = q.argmax(1)
        pos = int(torch.bincount(labels, minlength=2).argmax())
        minority = float((labels != pos).float().mean())
    return {
        "scores": (1.0 - q[:, pos]).numpy().astype(np.float64),
        "labels": (labels != pos).numpy().astype(np.int64),
        "minority_share": minority,
    }


def _outputs(
    model: CerGod, p: Prepared, und_t, pairs, cfg: CerGodConfig, parts: dict, seconds: float, gen: torch.Generator
) -> dict:
    """The fit's result: :func:`detect`'s scores and labels, collapse flag, edge weights, losses, the model and
    its config (for :func:`export_detector`)."""
    out = detect(model, p, und_t, cfg, gen)
    with torch.no_grad():
        weights = torch.sigmoid(model.mask_logits).numpy() if cfg.use_mask else np.ones(len(pairs), np.float32)
    return {
        **out,
        "collapsed": out["minority_share"] < cfg.collapse_share,
        "edge_pairs": pairs,
        "edge_weights": weights.astype(np.float64),
        "seconds": seconds,
        "final_losses": parts,
        "model": model,
        "config": cfg,
    }


# --- the trained detector as a folder (config.json + model.safetensors): CER-GOD's champion ---------------------

CHAMPION_FORMAT = "cer-god-detector/1"
_EDGES = "graph.edge_index"  # the trained graph's directed edges: the spoiler's logits are defined on them


def export_detector(model: CerGod, cfg: CerGodConfig, g: Graph, seed: int, **meta) -> dict:
    """A trained model as plain data (picklable across workers): ``config`` (JSON) and ``tensors`` (numpy)."""
    config = {
        "format": CHAMPION_FORMAT,
        "graph": g.name,
        "n_nodes": g.n,
        "in_dim": int(g.x.shape[1]),
        "n_undirected": int(model.mask_logits.numel()),
        "seed": int(seed),
        "cergod": {k: v for k, v in asdict(cfg).items() if k != "progress"},
        **meta,
    }
    tensors = {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}
    tensors[_EDGES] = np.ascontiguousarray(g.edge_index, dtype=np.int64)
    return {"config": config, "tensors": tensors}


def save_detector(state: dict, folder) -> Path:
    """Write :func:`export_detector`'s ``state`` as ``config.json`` + ``model.safetensors`` (no pickle)."""
    from safetensors.numpy import save_file

    from components.io import atomic_path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with atomic_path(folder / "model.safetensors") as tmp:
        save_file({k: np.ascontiguousarray(v) for k, v in state["tensors"].items()}, str(tmp))
    (folder / "config.json").write_text(json.dumps(state["config"], indent=1, sort_keys=True))
    return folder


class CerGodDetector:
    """A loaded CER-GOD champion: the model, its config and the graph it was trained on (transductive: the
    spoiler holds one logit per edge of that graph, so it scores that graph's nodes only)."""

    def __init__(self, model: CerGod, cfg: CerGodConfig, edge_index: np.ndarray, meta: dict):
        self.model, self.cfg, self.edge_index, self.meta = model.eval(), cfg, edge_index, meta

    def check(self, g: Graph) -> None:
        """A DataError unless ``g`` has the trained graph's nodes, feature width and edges."""
        if (g.n, int(g.x.shape[1])) != (self.meta["n_nodes"], self.meta["in_dim"]) or not np.array_equal(
            np.asarray(g.edge_index), self.edge_index
        ):
            raise DataError(
                f"cer-god detector: graph {g.name!r} ({g.n} nodes, {g.edge_index.shape[1]} edges) is not "
                f"the graph {self.meta['graph']!r} it was trained on ({self.meta['n_nodes']} nodes, "
                f"{self.edge_index.shape[1]} edges); rerun `paperline run cer-god` to retrain"
            )

    def score(self, g: Graph, p: Prepared, seed: int | None = None) -> dict:
        """:func:`detect` on ``g`` (prepared as the fit stage prepares it): scores, labels, minority share."""
        self.check(g)
        _, und = g.undirected()
        gen = torch.Generator().manual_seed(int(self.meta["seed"] if seed is None else seed))
        return detect(self.model, p, torch.as_tensor(und, dtype=torch.long), self.cfg, gen)

    def pyfunc_predict(self, x) -> np.ndarray:
        """MLflow pyfunc entry: the trained graph's node features (n, in_dim) -> outlier scores (n,)."""
        g = Graph(str(self.meta["graph"]), np.asarray(x, np.float32), self.edge_index)
        return self.score(g, prepare(g, 0))["scores"]


def load_detector(folder) -> CerGodDetector:
    """A :class:`CerGodDetector` from a folder written by :func:`save_detector` (safetensors + JSON: no pickle)."""
    from safetensors.numpy import load_file

    cfg_path, w_path = model_files(folder, "model.safetensors", "save_detector (a CER-GOD detector)")
    try:
        meta = json.loads(cfg_path.read_text())
        if meta.get("format") != CHAMPION_FORMAT:
            raise ValueError(f"format {meta.get('format')!r}, expected {CHAMPION_FORMAT!r}")
        tensors = load_file(str(w_path))
        edges = tensors.pop(_EDGES)
        cfg = CerGodConfig(**meta["cergod"])
        with torch.random.fork_rng(devices=[]):  # the initial weights are overwritten; keep the caller's generator
            model = CerGod(int(meta["in_dim"]), int(meta["n_undirected"]), cfg)
        model.load_state_dict({k: torch.from_numpy(v) for k, v in tensors.items()})
    except Exception as exc:
        raise DataError(f"{folder}: not a readable CER-GOD detector folder ({type(exc).__name__}: {exc})") from None
    return CerGodDetector(model, cfg, edges, meta)
