"""mix_synthetic: synthetic share of bytes, totals, seeding, errors."""

import numpy as np
import pytest

from components.data.rewrite import doc_bytes, mix_synthetic
from components.errors import DataError, ParamsError


def pool(label, n, seed):
    rng = np.random.default_rng(seed)
    return [{"id": f"{label}/{i}", "label": label, "text": "w" * int(rng.integers(200, 2000))} for i in range(n)]


NATURAL, SYNTHETIC = pool("natural", 400, 0), pool("synthetic", 300, 1)


def share(docs):
    syn = sum(doc_bytes(d) for d in docs if d["label"] == "synthetic")
    return syn / sum(doc_bytes(d) for d in docs)


@pytest.mark.parametrize("frac", [1.0, 0.67, 0.33, 0.0])
def test_synthetic_share_of_bytes_matches_the_paper_mixes(frac):
    mixed = mix_synthetic(NATURAL, SYNTHETIC, synthetic_frac=frac, seed=0)
    assert share(mixed) == pytest.approx(frac, abs=0.01)
    assert len({d["id"] for d in mixed}) == len(mixed)


def test_default_total_uses_the_limiting_pool():
    avail_syn = sum(map(doc_bytes, SYNTHETIC))
    mixed = mix_synthetic(NATURAL, SYNTHETIC, synthetic_frac=0.67, seed=0)
    used_syn = sum(doc_bytes(d) for d in mixed if d["label"] == "synthetic")
    assert used_syn == pytest.approx(avail_syn, rel=0.01)  # all synthetic text is used at 67/33 here


def test_total_bytes_is_honoured():
    mixed = mix_synthetic(NATURAL, SYNTHETIC, synthetic_frac=0.33, total_bytes=200_000, seed=0)
    assert sum(map(doc_bytes, mixed)) == pytest.approx(200_000, rel=0.01)
    assert share(mixed) == pytest.approx(0.33, abs=0.01)


def test_mix_is_seeded_and_shuffled():
    a = [d["id"] for d in mix_synthetic(NATURAL, SYNTHETIC, synthetic_frac=0.5, total_bytes=100_000, seed=4)]
    b = [d["id"] for d in mix_synthetic(NATURAL, SYNTHETIC, synthetic_frac=0.5, total_bytes=100_000, seed=4)]
    c = [d["id"] for d in mix_synthetic(NATURAL, SYNTHETIC, synthetic_frac=0.5, total_bytes=100_000, seed=5)]
    assert a == b and a != c
    labels = [i.split("/")[0] for i in a]
    assert labels != sorted(labels)  # interleaved, not two blocks


@pytest.mark.parametrize(
    "kw, exc, match",
    [
        (dict(synthetic_frac=1.5), ParamsError, "synthetic_frac"),
        (dict(synthetic_frac=0.5, total_bytes=10**9), ParamsError, "total_bytes"),
        (dict(synthetic_frac=0.5, synthetic_docs=[]), DataError, "synthetic documents"),
        (dict(synthetic_frac=0.5, natural_docs=[]), DataError, "natural documents"),
    ],
)
def test_bad_arguments_name_what_to_fix(kw, exc, match):
    args = dict(natural_docs=NATURAL, synthetic_docs=SYNTHETIC, seed=0)
    args.update(kw)
    with pytest.raises(exc, match=match):
        mix_synthetic(args.pop("natural_docs"), args.pop("synthetic_docs"), **args)
