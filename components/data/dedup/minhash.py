"""MinHash-LSH near-duplicate removal with a numpy or a datasketch backend.

Pipeline: normalise -> shingle -> MinHash signature (num_perm permutations) -> LSH
(bands x rows) proposes candidate pairs -> a pair is kept when its estimated Jaccard
(fraction of equal signature values over all num_perm) is >= threshold -> connected
components of kept pairs are clusters -> the first document of each cluster (input
order) is kept. datatrove's defaults are 5-word shingles and 14 bands x 8 rows.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Sequence

import numpy as np
from tqdm import tqdm

from components.data.dedup import minhash_numpy
from components.data.dedup.result import DedupResult, result_from_pairs
from components.data.dedup.text import SHINGLE_UNITS, doc_texts, normalize_text, shingle_strings, tokens
from components.errors import ParamsError

log = logging.getLogger(__name__)
BACKENDS = ("numpy", "datasketch")


def minhash_dedup(
    docs: Sequence[dict],
    *,
    threshold: float = 0.8,
    num_perm: int = 112,
    bands: int | None = None,
    rows: int | None = None,
    shingle_size: int = 5,
    shingle_unit: str = "word",
    text_field: str = "text",
    seed: int = 1,
    backend: str = "numpy",
    progress: bool = False,
) -> DedupResult:
    """Remove near-duplicates whose estimated Jaccard similarity is >= ``threshold``.

    ``bands``/``rows`` default to datasketch's choice for ``threshold`` and ``num_perm``
    (see :func:`choose_bands_rows`). Documents with no tokens after normalisation are
    never clustered (use :func:`exact_dedup` for those). Empty input gives an empty
    result. The same ``seed`` gives the same result, bit for bit.
    """
    _check_params(threshold, num_perm, shingle_size, shingle_unit, backend, seed)
    bands, rows = choose_bands_rows(threshold, num_perm, bands=bands, rows=rows)
    texts = doc_texts(docs, text_field)
    params = {
        "threshold": threshold, "num_perm": num_perm, "bands": bands, "rows": rows,
        "shingle_size": shingle_size, "shingle_unit": shingle_unit, "seed": seed, "backend": backend,
    }  # fmt: skip
    if backend == "numpy":
        sig = minhash_numpy.signatures(
            texts,
            num_perm=num_perm,
            shingle_size=shingle_size,
            shingle_unit=shingle_unit,
            seed=seed,
            progress=progress,
        )
        active = (sig != minhash_numpy.MAX_HASH).any(axis=1)
        candidates = minhash_numpy.lsh_pairs(sig, active, bands, rows)
        pairs = minhash_numpy.verify_pairs(sig, candidates, threshold)
        n_candidates = len(candidates)
    else:
        pairs, n_candidates = _datasketch_pairs(texts, params, progress)
    result = result_from_pairs(docs, pairs, method=f"minhash-{backend}", params=params)
    log.info("minhash (%s): %d candidate pairs, %d verified; %s", backend, n_candidates, len(pairs), result.stats())
    return result


# Upper bounds: signatures take 8 bytes per document and permutation (4096 permutations of a
# million documents is 32 GB), and choosing bands x rows scans every split of num_perm; a
# shingle of more than 1000 words matches only verbatim copies (use exact dedup for those).
MAX_NUM_PERM = 4096
MAX_SHINGLE_SIZE = 1000


def _check_params(threshold: float, num_perm: int, shingle_size: int, unit: str, backend: str, seed: int) -> None:
    if not isinstance(threshold, (int, float)) or not 0.0 < threshold <= 1.0:
        raise ParamsError(f"threshold: expected a number in (0, 1], got {threshold!r}")
    for name, value, top in (("num_perm", num_perm, MAX_NUM_PERM), ("shingle_size", shingle_size, MAX_SHINGLE_SIZE)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ParamsError(f"{name}: expected a positive integer, got {value!r}")
        if value > top:
            raise ParamsError(f"{name}: {value} is above the limit of {top}")
    if not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise ParamsError(f"seed: expected an integer in [0, 2**32), got {seed!r}")
    if unit not in SHINGLE_UNITS:
        raise ParamsError(f"shingle_unit: expected one of {SHINGLE_UNITS}, got {unit!r}")
    if backend not in BACKENDS:
        raise ParamsError(f"backend: expected one of {BACKENDS}, got {backend!r}")


def choose_bands_rows(
    threshold: float, num_perm: int, *, bands: int | None = None, rows: int | None = None
) -> tuple[int, int]:
    """Return (bands, rows) with bands * rows <= num_perm.

    Both None: the pair minimising the equally weighted false-positive and
    false-negative areas under the LSH S-curve (datasketch's ``_optimal_param``).
    One given: the other is ``num_perm // given``. Both given: checked.
    """
    for name, value in (("bands", bands), ("rows", rows)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise ParamsError(f"{name}: expected a positive integer or null, got {value!r}")
    if bands is None and rows is None:
        return _optimal_param(float(threshold), int(num_perm))
    if rows is None:
        rows = num_perm // bands
    elif bands is None:
        bands = num_perm // rows
    if bands < 1 or rows < 1 or bands * rows > num_perm:
        raise ParamsError(f"bands x rows: {bands} x {rows} needs at most num_perm={num_perm} permutations")
    return bands, rows


@functools.lru_cache(maxsize=64)
def _optimal_param(threshold: float, num_perm: int) -> tuple[int, int]:
    try:
        from datasketch.lsh import _optimal_param as datasketch_optimal
    except ImportError:  # datasketch is in the `text` extra; keep the numpy backend usable without it
        return _optimal_param_fallback(threshold, num_perm)
    b, r = datasketch_optimal(threshold, num_perm, 0.5, 0.5)
    return int(b), int(r)


def _optimal_param_fallback(threshold: float, num_perm: int) -> tuple[int, int]:
    """The same search as datasketch (reimplemented only for when it is not installed)."""
    from scipy.integrate import quad

    best, opt = float("inf"), (1, 1)
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            fp = quad(lambda s, b=b, r=r: 1 - (1 - s**r) ** b, 0.0, threshold)[0]
            fn = quad(lambda s, b=b, r=r: (1 - s**r) ** b, threshold, 1.0)[0]
            if 0.5 * fp + 0.5 * fn < best:
                best, opt = 0.5 * fp + 0.5 * fn, (b, r)
    return opt


def _datasketch_pairs(texts: Sequence[str], params: dict, progress: bool) -> tuple[np.ndarray, int]:
    """Verified pairs from datasketch ``MinHash`` (SHA-1 of each shingle) and ``MinHashLSH``.

    Streaming: each document queries the index of earlier ones, then is inserted.
    """
    try:
        from datasketch import MinHash, MinHashLSH
    except ImportError:
        raise ParamsError("backend: 'datasketch' needs the datasketch package (install paperline[text])") from None
    num_perm, seed, unit, k = params["num_perm"], params["seed"], params["shingle_unit"], params["shingle_size"]
    perms = MinHash(num_perm=num_perm, seed=seed).permutations  # shared: drawing them per doc is slow
    # datasketch >= 2.0 wants the scheme named when permutations are passed; 1.x has one scheme.
    scheme = {"scheme": "affine32"} if "scheme" in inspect.signature(MinHash).parameters else {}
    lsh = MinHashLSH(num_perm=num_perm, params=(params["bands"], params["rows"]))
    sketches: dict[int, MinHash] = {}
    pairs: list[tuple[int, int]] = []
    n_candidates = 0
    for i, text in enumerate(tqdm(texts, desc="minhash (datasketch)", unit="doc", disable=None if progress else True)):
        shingles = shingle_strings(tokens(normalize_text(text), unit), k, unit)
        if not shingles:
            continue
        m = MinHash(num_perm=num_perm, seed=seed, permutations=perms, **scheme)
        m.update_batch([s.encode("utf-8") for s in shingles])
        for j in lsh.query(m):
            n_candidates += 1
            if m.jaccard(sketches[j]) >= params["threshold"]:
                pairs.append((j, i))
        lsh.insert(i, m)
        sketches[i] = m
    return np.array(pairs, dtype=np.int64).reshape(-1, 2), n_candidates
