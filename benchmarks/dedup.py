"""MinHash dedup benchmark: our numpy backend vs datasketch (and datatrove, if available).

Same corpus, same parameters (threshold, 5-word shingles, 112 permutations, 14 bands x 8
rows, seed) for every method, in one run. Prints docs/s per core (one process, one
thread) and precision/recall/F1 of removals against the injected near-copies
(``score_dedup``: one removal per injected copy, whichever member is kept), plus the
agreement of each method with an exact-Jaccard oracle (all pairs with true Jaccard >=
threshold, found with a sparse matrix product), which separates "is the MinHash
implementation faithful" from "is the threshold right for these edits".

Corpus: ``--corpus`` (JSONL with id, text, dup_of) or data/qualitypajama/corpus.jsonl
(then corpus/pool.jsonl) if it exists with >= --min-docs records; otherwise one is built from text files on this
machine (/usr/share/doc and /usr/share/common-licenses), cut into 1-3 KB docs, with natural near-duplicates removed
(true Jaccard >= 0.3 to an earlier doc) and 15% near-copies injected (each with random
word substitutions/deletions/insertions at a rate drawn from ``--edit-rate``).

datatrove is run in a separate interpreter given by ``--datatrove-python`` (a throwaway
venv with ``pip install datatrove spacy``), because its dependencies (huggingface_hub
2.x) must not enter the project venv; the same file serves as that worker.

    .venv/bin/python benchmarks/dedup.py [--n-docs 4000] [--edit-rate 0.05 0.15]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Used by default when present with at least --min-docs records (smaller ones time poorly).
DEFAULT_CORPORA = (Path("data/qualitypajama/corpus.jsonl"), Path("data/qualitypajama/corpus/pool.jsonl"))
TEXT_GLOBS = ("README*", "NEWS*", "*.md", "*.md.gz", "*.txt", "*.txt.gz", "*.rst", "*.rst.gz", "copyright")


def _read(path: Path) -> str:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="strict") as fh:
            return fh.read()
    except (UnicodeDecodeError, OSError, EOFError):
        return ""


def build_base(n_docs: int, rng: random.Random) -> list[dict]:
    """Cut local documentation into 1-3 KB docs (paragraph boundaries), in sorted file order."""
    files = sorted(Path("/usr/share/common-licenses").glob("*"))
    for pattern in TEXT_GLOBS:
        files += sorted(Path("/usr/share/doc").rglob(pattern))
    docs: list[dict] = []
    for path in dict.fromkeys(files):
        buf, target = [], rng.randint(1000, 3000)
        for para in _read(path).split("\n\n"):
            buf.append(para.strip())
            if sum(map(len, buf)) >= target:
                docs.append({"id": f"base{len(docs):06d}", "source": str(path), "text": "\n\n".join(buf)})
                buf, target = [], rng.randint(1000, 3000)
        if len(docs) >= 3 * n_docs:  # spare docs: natural duplicates are removed next
            break
    return docs


def shingle_sets(texts: list[str], k: int) -> list[set[str]]:
    from components.data.dedup.text import normalize_text, shingle_strings, tokens

    return [set(shingle_strings(tokens(normalize_text(t), "word"), k, "word")) for t in texts]


def jaccard_pairs(texts: list[str], k: int, min_jaccard: float):
    """All pairs (i < j) with exact shingle Jaccard >= min_jaccard, via a sparse product."""
    import numpy as np
    from scipy.sparse import csr_matrix, triu

    sets = shingle_sets(texts, k)
    vocab: dict[str, int] = {}
    cols = [vocab.setdefault(s, len(vocab)) for sset in sets for s in sset]
    indptr = np.cumsum([0] + [len(s) for s in sets])
    x = csr_matrix((np.ones(len(cols), dtype=np.float32), cols, indptr), shape=(len(sets), len(vocab)))
    inter = triu(x @ x.T, k=1).tocoo()
    sizes = np.array([len(s) for s in sets], dtype=np.float64)
    jac = inter.data / (sizes[inter.row] + sizes[inter.col] - inter.data)
    keep = jac >= min_jaccard
    return np.stack([inter.row[keep], inter.col[keep]], axis=1).astype(np.int64), jac[keep]


def drop_natural_dups(docs: list[dict], k: int, n_docs: int) -> list[dict]:
    """Remove every base doc with true Jaccard >= 0.3 to an earlier one; keep n_docs."""
    pairs, _ = jaccard_pairs([d["text"] for d in docs], k, 0.3)
    later = set(pairs.max(axis=1).tolist())
    return [d for i, d in enumerate(docs) if i not in later][:n_docs]


def edit_copy(text: str, rate: float, vocab: list[str], rng: random.Random) -> str:
    """Substitute, delete or insert words at ``rate`` of the positions (spread at random)."""
    words = text.split()
    for _ in range(max(1, round(rate * len(words)))):
        op, pos = rng.choice("sdi"), rng.randrange(len(words))
        if op == "s":
            words[pos] = rng.choice(vocab)
        elif op == "d" and len(words) > 10:
            del words[pos]
        else:
            words.insert(pos, rng.choice(vocab))
    return " ".join(words)


def inject(base: list[dict], frac: float, edit_rate: tuple[float, float], seed: int) -> list[dict]:
    rng = random.Random(seed)
    docs = [{**d, "label": "natural", "dup_of": None, "junk_kind": None} for d in base]
    vocab = [w for d in rng.sample(base, min(200, len(base))) for w in d["text"].split()]
    for n, orig in enumerate(rng.sample(base, round(frac * len(base)))):
        text = edit_copy(orig["text"], rng.uniform(*edit_rate), vocab, rng)
        docs.append({"id": f"near{n:06d}", "source": orig["source"], "text": text, "label": "near_dup",
                     "dup_of": orig["id"], "junk_kind": None})  # fmt: skip
    rng.shuffle(docs)
    return docs


def load_corpus(args) -> tuple[list[dict], str]:
    from components.io import read_jsonl

    path = args.corpus
    for candidate in () if path else DEFAULT_CORPORA:
        if candidate.exists():
            with open(candidate, encoding="utf-8") as fh:
                enough = sum(1 for _ in fh) >= args.min_docs
            if enough:
                path = candidate
                break
    if path:
        docs = read_jsonl(path, required=("id", "text", "dup_of"))
        return docs[: args.n_docs] if args.n_docs else docs, str(path)
    rng = random.Random(args.seed)
    base = drop_natural_dups(build_base(args.n_docs, rng), args.shingle_size, args.n_docs)
    lo, hi = args.edit_rate
    return inject(base, args.near_dup_frac, (lo, hi), args.seed), f"built ({len(base)} base docs, edit rate {lo}-{hi})"


def run_ours(docs: list[dict], backend: str, args) -> tuple[float, list[str]]:
    from components.data.dedup import minhash_dedup

    kwargs = dict(threshold=args.threshold, num_perm=args.num_perm, bands=args.bands, rows=args.rows,
                  shingle_size=args.shingle_size, seed=1, backend=backend)  # fmt: skip
    minhash_dedup(docs[:50], **kwargs)  # warm-up: imports and caches are not what we measure
    best = float("inf")
    for _ in range(args.repeat):  # best of N: the 2 shared cores make single timings noisy
        t0 = time.perf_counter()
        result = minhash_dedup(docs, **kwargs)
        best = min(best, time.perf_counter() - t0)
    return best, result.removed_ids


def run_datatrove(docs: list[dict], args) -> tuple[float, list[str]] | str:
    """Run datatrove's 4 MinHash stages in ``--datatrove-python``; returns (seconds, removed ids) or why not."""
    python = args.datatrove_python
    if not python:
        try:
            import datatrove  # noqa: F401

            python = sys.executable
        except ImportError:
            return "skipped: datatrove not importable here and no --datatrove-python given"
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "in").mkdir()
        with open(Path(tmp) / "in" / "docs.jsonl", "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps({"id": d["id"], "text": d["text"]}) + "\n" for d in docs)
        cmd = [python, __file__, "--datatrove-worker", tmp, "--bands", str(args.bands), "--rows", str(args.rows),
               "--shingle-size", str(args.shingle_size)]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""})
        if proc.returncode != 0:
            return "failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
        out = json.loads(Path(tmp, "result.json").read_text())
    return out["seconds"], out["removed_ids"]


def datatrove_worker(tmp: str, args) -> None:
    """Inside the datatrove interpreter: signatures -> buckets -> clusters -> filter, one task each."""
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (
        MinhashConfig,
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    w = Path(tmp)
    cfg = MinhashConfig(n_grams=args.shingle_size, num_buckets=args.bands, hashes_per_bucket=args.rows, seed=1)
    stages = [
        ([JsonlReader(str(w / "in")), MinhashDedupSignature(output_folder=str(w / "sigs"), config=cfg)], 1),
        ([MinhashDedupBuckets(input_folder=str(w / "sigs"), output_folder=str(w / "buckets"), config=cfg)], args.bands),
        ([MinhashDedupCluster(input_folder=str(w / "buckets"), output_folder=str(w / "ids"), config=cfg)], 1),
        ([JsonlReader(str(w / "in")), MinhashDedupFilter(input_folder=str(w / "ids"),
          exclusion_writer=JsonlWriter(str(w / "removed"), compression=None))], 1),
    ]  # fmt: skip
    t0 = time.perf_counter()
    for n, (pipeline, tasks) in enumerate(stages):
        LocalPipelineExecutor(pipeline, tasks=tasks, workers=1, logging_dir=str(w / f"logs{n}")).run()
    seconds = time.perf_counter() - t0
    files = sorted((w / "removed").glob("*.jsonl"))
    removed = [json.loads(ln)["id"] for f in files for ln in f.read_text().splitlines()]
    (w / "result.json").write_text(json.dumps({"seconds": seconds, "removed_ids": removed}))


def prf(predicted: set, truth: set) -> tuple[float, float, float]:
    tp = len(predicted & truth)
    p = tp / len(predicted) if predicted else 1.0
    r = tp / len(truth) if truth else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, help="JSONL with id, text, dup_of (default: built here)")
    ap.add_argument("--n-docs", type=int, default=4000, help="base docs to build, or docs to take from --corpus")
    ap.add_argument("--min-docs", type=int, default=1000, help="smallest default corpus to use instead of building one")
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--num-perm", type=int, default=112)
    ap.add_argument("--bands", type=int, default=14)
    ap.add_argument("--rows", type=int, default=8)
    ap.add_argument("--shingle-size", type=int, default=5)
    ap.add_argument("--near-dup-frac", type=float, default=0.15)
    ap.add_argument("--edit-rate", type=float, nargs=2, default=(0.05, 0.15), metavar=("LO", "HI"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per method (best is reported; datatrove: 1)")
    ap.add_argument("--datatrove-python", help="interpreter with datatrove (+spacy) installed")
    ap.add_argument("--datatrove-worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.datatrove_worker:
        return datatrove_worker(args.datatrove_worker, args)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    report(args)


def report(args) -> None:
    from components.data.dedup import DedupResult, score_dedup
    from components.data.dedup.result import result_from_pairs

    docs, origin = load_corpus(args)
    truth = {d["id"] for d in docs if d["dup_of"] is not None}

    def vs_truth(removed: list[str]) -> tuple[float, float, float]:
        s = score_dedup(DedupResult(kept=[], clusters=[], removed_ids=removed), docs)
        return s["precision"], s["recall"], s["f1"]

    by_id = {d["id"]: i for i, d in enumerate(docs)}
    t0 = time.perf_counter()
    pairs, _ = jaccard_pairs([d["text"] for d in docs], args.shingle_size, args.threshold)
    oracle = set(result_from_pairs(docs, pairs, method="exact-jaccard", params={}).removed_ids)
    oracle_s = time.perf_counter() - t0
    print(f"corpus: {origin}; {len(docs)} docs, {len(truth)} injected near-copies, "
          f"{sum(len(d['text']) for d in docs) / 1e6:.1f} MB")  # fmt: skip
    _print_injected(docs, by_id, args)
    print(f"params: threshold {args.threshold}, {args.shingle_size}-word shingles, {args.num_perm} perms, "
          f"{args.bands} bands x {args.rows} rows, seed 1; one process, one thread\n")  # fmt: skip
    runs = {"numpy (ours)": run_ours(docs, "numpy", args), "datasketch": run_ours(docs, "datasketch", args)}
    runs["datatrove"] = run_datatrove(docs, args)
    head = f"{'method':<14}{'docs/s/core':>12}{'seconds':>9}{'P':>7}{'R':>7}{'F1':>7}{'P@oracle':>10}{'R@oracle':>10}"
    print(head + "\n" + "-" * len(head))
    for name, run in runs.items():
        if isinstance(run, str):
            print(f"{name:<14}{run}")
            continue
        secs, removed = run
        p, r, f = vs_truth(removed)
        po, ro, _ = prf(set(removed), oracle)
        print(f"{name:<14}{len(docs) / secs:>12.0f}{secs:>9.2f}{p:>7.3f}{r:>7.3f}{f:>7.3f}{po:>10.3f}{ro:>10.3f}")
    p, r, f = vs_truth(sorted(oracle))
    print(f"{'exact Jaccard':<14}{len(docs) / oracle_s:>12.0f}{oracle_s:>9.2f}{p:>7.3f}{r:>7.3f}{f:>7.3f}"
          f"{1:>10.3f}{1:>10.3f}   (oracle: all pairs, sparse product)")  # fmt: skip
    base = runs["datasketch"][0]
    for name in ("numpy (ours)", "datatrove"):
        if not isinstance(runs[name], str):
            print(f"throughput {name} / datasketch: {base / runs[name][0]:.2f}x")


def _print_injected(docs: list[dict], by_id: dict, args) -> None:
    """True Jaccard of each injected copy with its original: why recall is what it is."""
    import numpy as np

    pairs = [(by_id[d["dup_of"]], i) for i, d in enumerate(docs) if d["dup_of"] is not None and d["dup_of"] in by_id]
    if not pairs:
        return
    sets = shingle_sets([d["text"] for d in docs], args.shingle_size)
    jac = np.array([len(sets[a] & sets[b]) / max(1, len(sets[a] | sets[b])) for a, b in pairs])
    q = np.quantile(jac, [0.0, 0.5, 1.0])
    print(f"injected pairs' true Jaccard: min {q[0]:.2f}, median {q[1]:.2f}, max {q[2]:.2f}; "
          f"{(jac >= args.threshold).mean():.1%} at or above the threshold {args.threshold}")  # fmt: skip


if __name__ == "__main__":
    main()
