"""The MILCO-mini encoder (after ``thongnt99/milco``, ``milco/model/milco.py``): a tiny multilingual transformer,
the connector (Linear + GELU) into an MLM head over the English lexical space, the pivot vector
log1p(ReLU(max over tokens of the masked logits)), and the LexEcho source view; plus the dense bi-encoder on the
same backbone (mean-pooled states through a linear map).

LexEcho follows the official code: v_t = ReLU(Linear(h_t)) * scale per input token. The card's [ECHO] token
(its role is not in the code) is our documented choice: a learned token after [CLS] whose final state gives a
per-text gate softplus(w . h_echo + b) that multiplies the whole source view; [CLS] and [ECHO] positions carry no
echo weight themselves.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from components.errors import DataError
from components.sparse_retrieval.lexicon import CLS, ECHO


@dataclass(frozen=True)
class EncoderConfig:
    vocab_in: int  # shared EN+ES BPE size
    vocab_en: int  # English lexical space size
    kind: str = "sparse"  # sparse | dense
    echo: bool = True
    d_model: int = 128
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 256
    d_en: int = 128  # width of the English MLM head (the connector's output)
    d_dense: int = 128  # dense bi-encoder output width
    max_len: int = 64


class MLMHead(nn.Module):
    """BERT's ``cls.predictions``: transform (Linear, GELU, LayerNorm) then the decoder over the English terms."""

    def __init__(self, d: int, vocab: int) -> None:
        super().__init__()
        self.transform, self.norm, self.decoder = nn.Linear(d, d), nn.LayerNorm(d), nn.Linear(d, vocab)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.norm(F.gelu(self.transform(h))))


class MilcoEncoder(nn.Module):
    def __init__(self, cfg: EncoderConfig) -> None:
        super().__init__()
        if cfg.kind not in ("sparse", "dense"):
            raise DataError(f"encoder kind {cfg.kind!r}: use 'sparse' or 'dense'")
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab_in, cfg.d_model, padding_idx=0)
        self.pos = nn.Embedding(cfg.max_len, cfg.d_model)
        layer = nn.TransformerEncoderLayer(
            cfg.d_model, cfg.n_heads, cfg.d_ff, dropout=0.0, batch_first=True, norm_first=True, activation="gelu"
        )
        self.body = nn.TransformerEncoder(layer, cfg.n_layers, enable_nested_tensor=False)
        self.final_norm = nn.LayerNorm(cfg.d_model)
        if cfg.kind == "dense":
            self.out = nn.Linear(cfg.d_model, cfg.d_dense)
            return
        self.connector = nn.Linear(cfg.d_model, cfg.d_en)
        self.mlm_head = MLMHead(cfg.d_en, cfg.vocab_en)
        if cfg.echo:
            self.echo = nn.Linear(cfg.d_model, 1)
            self.scale = nn.Parameter(torch.tensor([1.0]))
            self.echo_gate = nn.Linear(cfg.d_model, 1)

    def hidden(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(ids.shape[1], device=ids.device)
        h = self.tok(ids) + self.pos(pos)[None]
        return self.final_norm(self.body(h, src_key_padding_mask=mask == 0))

    def max_logits(self, h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Max over the real tokens of the English logits.

        The official code multiplies the logits by the mask, so a padded text's max is >= 0 and comes from a padding
        position whenever every real token's logit is negative; the gradient of that dimension is then 0. With a
        pretrained SPLADE head that rarely matters; with our randomly initialised tiny head it froze every
        teacher term the student had not yet switched on (SAP stalled). Padding is therefore left out of the max
        (filled with -1e4). The pivot log1p(ReLU(max)) is the same either way; only SAP's raw logits differ.

        The head runs on the real tokens only (about 60% of the padded positions of LibreOffice paragraphs), and
        the max is taken over each text's own rows: the same values and gradients as running the head on every
        position and masking padding to -1e4 before the max (checked in the tests), with the head's GEMMs and
        their backward on the real rows only and no B x L x V block at all (`benchmarks/milco_encoder.py` times it
        against the masked form). A gather-the-arg-max variant that backpropagates through B x V logits only was
        tried earlier: slower on CPU than the BLAS matmuls of this form."""
        keep = mask != 0
        real = self.mlm_head(F.gelu(self.connector(h[keep])))  # (real tokens, V), text after text
        grad = torch.is_grad_enabled()

        def text_max(part: torch.Tensor) -> torch.Tensor:
            if not len(part):  # a text without real tokens: every term at the padding fill
                return real.new_full(real.shape[1:], -1e4)
            # the gradient goes to one arg-max (amax would split it between ties); without grad, amax gives the
            # same values without the indices
            return part.max(dim=0).values if grad else part.amax(dim=0)

        return torch.stack([text_max(part) for part in real.split(keep.sum(1).tolist())])

    def echo_view(self, h: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(B, L) source-view weights: ReLU(Linear(h_t)) * scale * gate([ECHO]); 0 at [CLS]/[ECHO]/padding."""
        v = torch.relu(self.echo(h).squeeze(-1)) * self.scale
        keep = mask * (ids != CLS) * (ids != ECHO)
        pos = (ids == ECHO).float()
        gate = F.softplus(self.echo_gate((h * pos.unsqueeze(-1)).sum(1))).squeeze(-1)  # no [ECHO]: gate(0)
        return v * keep * gate.unsqueeze(-1)

    def pyfunc_predict(self, ids) -> np.ndarray:
        """What a logged encoder serves through MLflow (the kit's folder pyfunc calls it): :func:`served_output`."""
        return served_output(self, ids)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
        """``dense``: the (B, d) embedding; ``sparse``: the raw max logits, the pivot and (with echo) the view."""
        h = self.hidden(ids, mask)
        if self.cfg.kind == "dense":
            m = mask.unsqueeze(-1).float()
            return {"dense": F.normalize(self.out((h * m).sum(1) / m.sum(1).clamp(min=1)), dim=-1)}
        raw = self.max_logits(h, mask)
        out = {"raw": raw, "pivot": torch.log1p(torch.relu(raw))}
        if self.cfg.echo:
            out["echo"] = self.echo_view(h, ids, mask)
        return out


@torch.no_grad()
def init_lexical_head(
    model: MilcoEncoder, english: tuple, term_tokens: Sequence[int], *, bias: float = -3.0, batch: int = 256
) -> None:
    """Initialise the MLM decoder as an English lexical head: row j is the (centred, unit-norm) mean head input
    of the token ``term_tokens[j]`` (the first BPE token of English term j) over English texts, and every bias is
    ``bias`` < 0, so an English text switches on its own words and little else, and an unrelated term starts below
    0 as in a trained MLM head.

    Why: MILCO's head is SPLADE's pretrained MLM head (BERT ties its decoder to the word embeddings); ours would be
    random, and from a random head max-pooled SAP collapsed to one input-independent vector in about 20 steps
    (measured: across-text std of the encoder states 0.72 -> 0.05). This init uses English text and the
    lexical space only (no teacher weights, no labels); terms without a token (-1) keep a zero row."""
    ids, mask = (torch.as_tensor(a) for a in english)
    d = model.mlm_head.decoder.in_features
    sums = torch.zeros(model.cfg.vocab_in, d)
    counts = torch.zeros(model.cfg.vocab_in)
    total, n = torch.zeros(d), 0
    was = model.training
    model.eval()
    for s in range(0, len(ids), batch):
        i, m = ids[s : s + batch], mask[s : s + batch]
        h = model.hidden(i, m)
        z = model.mlm_head.norm(F.gelu(model.mlm_head.transform(F.gelu(model.connector(h)))))
        keep = m.reshape(-1) > 0
        flat_i, flat_z = i.reshape(-1)[keep], z.reshape(-1, d)[keep]
        sums.index_add_(0, flat_i, flat_z)
        counts.index_add_(0, flat_i, torch.ones(len(flat_i)))
        total += flat_z.sum(0)
        n += len(flat_i)
    mu = sums / counts.clamp(min=1)[:, None] - total / max(n, 1)
    tt = torch.as_tensor(list(term_tokens), dtype=torch.long)
    rows = torch.where(((tt >= 0) & (counts[tt.clamp(min=0)] > 0))[:, None], mu[tt.clamp(min=0)], torch.zeros(d))
    model.mlm_head.decoder.weight.copy_(F.normalize(rows, dim=-1))
    model.mlm_head.decoder.bias.fill_(bias)
    model.train(was)


def echo_bags(ids: torch.Tensor, vals: torch.Tensor, vocab_in: int) -> torch.Tensor:
    """(B, vocab_in) summed echo weight per source token id: the bag whose dot product is LexEcho's score."""
    return torch.zeros(ids.shape[0], vocab_in, dtype=vals.dtype, device=vals.device).scatter_add_(1, ids, vals)


def served_output(model: MilcoEncoder, ids) -> np.ndarray:
    """What a served MILCO model returns for token ids (int64, [CLS]-first, 0 = padding): the pivot vector over
    the English lexical space, or the dense embedding (the logged encoder's and the retriever's pyfunc).

    MLflow hands a signature's named tensor over as ``{"token_ids": array}``; a bare array is taken as it is."""
    if isinstance(ids, dict):
        ids = ids["token_ids"] if "token_ids" in ids else next(iter(ids.values()))
    ids = torch.as_tensor(np.asarray(ids, dtype="int64"))
    with torch.no_grad():
        out = model(ids, (ids != 0).long())
    return (out["dense"] if "dense" in out else out["pivot"]).numpy()


def save_encoder(model: MilcoEncoder, folder: Path) -> None:
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(asdict(model.cfg), indent=1))
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(folder / "model.safetensors"))


def load_encoder(folder: str | Path) -> MilcoEncoder:
    from components.inputs import load_safetensors, load_state_into
    from components.io import read_json

    folder = Path(folder)
    cfg_path, w_path = folder / "config.json", folder / "model.safetensors"
    try:
        cfg = EncoderConfig(**read_json(cfg_path, kind=dict))
    except TypeError as exc:
        raise DataError(f"{cfg_path}: not a MILCO encoder config ({str(exc)[:100]})") from None
    model = MilcoEncoder(cfg)
    load_state_into(model, load_safetensors(w_path), w_path, cfg_path)
    return model.eval()
