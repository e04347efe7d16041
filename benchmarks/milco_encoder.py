"""The MILCO encoder's max-pooled lexical head: the shipped form (``MilcoEncoder.max_logits``: the head on the real
tokens only, the max over each text's own rows) against the dense masked form it replaced (the head on every
padded position, padding filled with -1e4, then the max over positions), measured in the same run on the same
inputs. Prints seconds per call and the ratio (dense / shipped) for a training step (forward + backward) and for
inference (no autograd), and checks that both give the same values.

    python benchmarks/milco_encoder.py [--batch 64] [--infer-batch 256] [--len 32] [--terms 4000] [--threads 1]

Lengths follow the default profile's stage-2 documents (about 58% real tokens of 32); pass ``--real`` to change.
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F

from components.sparse_retrieval.model import EncoderConfig, MilcoEncoder


def dense_masked(model: MilcoEncoder, h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The replaced form (the named baseline): B x L x V logits, padding masked in place, max over L."""
    logits = model.mlm_head(F.gelu(model.connector(h)))
    logits.masked_fill_(mask.unsqueeze(-1) == 0, -1e4)
    return logits.max(dim=1).values if torch.is_grad_enabled() else logits.amax(dim=1)


def _lengths(n: int, length: int, real: float, gen: torch.Generator) -> torch.Tensor:
    """Text lengths with mean ``real`` x ``length`` (uniform around it, at least 2 tokens, at most ``length``)."""
    mean = real * length
    lo, hi = max(2, round(2 * mean - length)), length
    return torch.randint(lo, hi + 1, (n,), generator=gen)


def _time(fn, repeats: int) -> float:
    fn()  # warm-up
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--batch", type=int, default=64, help="texts per training step (stage 2's batch)")
    ap.add_argument("--infer-batch", type=int, default=256, help="texts per inference batch (encode_all's)")
    ap.add_argument("--len", type=int, default=32, dest="length", help="padded length (doc_len)")
    ap.add_argument("--terms", type=int, default=4000, help="English lexical space (data.english_vocab)")
    ap.add_argument("--real", type=float, default=0.58, help="mean share of real (non-padding) tokens")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=10)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    model = MilcoEncoder(EncoderConfig(vocab_in=8000, vocab_en=a.terms, echo=False, max_len=a.length))
    print(
        f"{a.terms} terms, length {a.length}, ~{a.real:.0%} real tokens, {a.threads} thread(s), "
        f"{a.repeats} repeats; ratio = dense masked / shipped"
    )
    for label, n, grad in (("train step (fwd + bwd)", a.batch, True), ("inference", a.infer_batch, False)):
        lengths = _lengths(n, a.length, a.real, gen)
        mask = (torch.arange(a.length)[None] < lengths[:, None]).long()
        h = torch.randn(n, a.length, model.cfg.d_model, generator=gen, requires_grad=grad)
        weights = torch.randn(n, a.terms, generator=gen)

        def run(form, h=h, mask=mask, weights=weights, grad=grad):  # this iteration's inputs, bound explicitly
            def go():
                with torch.set_grad_enabled(grad):
                    out = form(h, mask)
                    if grad:
                        model.zero_grad()
                        (out * weights).sum().backward()

            return go

        dense = lambda h, mask: dense_masked(model, h, mask)  # noqa: E731
        with torch.set_grad_enabled(grad):
            same = torch.allclose(dense(h, mask), model.max_logits(h, mask))
        t_dense, t_ship = _time(run(dense), a.repeats), _time(run(model.max_logits), a.repeats)
        print(
            f"{label:24s} {n:4d} texts ({mask.float().mean():.0%} real): dense masked {t_dense * 1e3:7.1f} ms, "
            f"shipped {t_ship * 1e3:7.1f} ms, ratio {t_dense / t_ship:4.2f}x, same values: {same}"
        )


if __name__ == "__main__":
    main()
