"""Heuristic document filters in the style of datatrove: a rule says keep or drop, and why.

A :class:`Rule` overrides one method, :meth:`Rule.check_text`, returning a
:class:`Decision`. :func:`apply_filters` runs rules in order, stops at the first
drop, records ``"<rule>:<reason>"`` on the dropped document and counts reasons, so
drop reasons are data (for reports and validation), not log lines.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from components.data.dedup.text import doc_text
from components.errors import DataError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Decision:
    """A rule's verdict. ``text``, when set, replaces the document text (C4 drops lines)."""

    keep: bool
    reason: str | None = None
    text: str | None = None


KEEP = Decision(True)


def drop(reason: str) -> Decision:
    """A drop decision with a short snake_case reason."""
    return Decision(False, reason)


class Rule:
    """Base class: subclasses set ``name`` and implement :meth:`check_text`.

    Thresholds are constructor arguments (dataclass fields) with the published
    defaults, so a flow can expose every one of them.
    """

    name: str = "rule"

    def check(self, doc: dict, text_field: str = "text") -> Decision:
        """Decide on one document (raises :class:`DataError` if it lacks ``text_field``)."""
        return self.check_text(doc_text(doc, text_field, -1))

    def check_text(self, text: str) -> Decision:  # pragma: no cover - abstract
        raise NotImplementedError

    def params(self) -> dict[str, Any]:
        """The rule's thresholds, for logging next to the counts."""
        return dataclasses.asdict(self) if dataclasses.is_dataclass(self) else {}


@dataclass
class FilterResult:
    """Kept documents, dropped documents (each with ``drop_reason``), and reason counts."""

    kept: list[dict]
    dropped: list[dict]
    counts: dict[str, int] = field(default_factory=dict)

    def stats(self) -> dict[str, int]:
        """n_in, n_kept, n_dropped."""
        return {"n_in": len(self.kept) + len(self.dropped), "n_kept": len(self.kept), "n_dropped": len(self.dropped)}


def apply_filters(
    docs: Sequence[dict], rules: Sequence[Rule], *, text_field: str = "text", progress: bool = False
) -> FilterResult:
    """Run ``rules`` in order on each document; the first drop wins.

    Input documents are not modified: a dropped document is a copy with
    ``drop_reason = "<rule name>:<reason>"``; a kept document whose text a rule edited
    is a copy with the new text. Empty input gives an empty result.
    """
    kept: list[dict] = []
    dropped: list[dict] = []
    counts: Counter[str] = Counter()
    for i, doc in enumerate(tqdm(docs, desc="filters", unit="doc", disable=None if progress else True)):
        text = original = doc_text(doc, text_field, i)
        reason = None
        for rule in rules:
            decision = rule.check_text(text)
            if not decision.keep:
                reason = f"{rule.name}:{decision.reason}"
                break
            if decision.text is not None:
                text = decision.text
        if reason is not None:
            dropped.append({**doc, "drop_reason": reason})
            counts[reason] += 1
        else:
            kept.append(doc if text is original else {**doc, text_field: text})
    result = FilterResult(kept, dropped, dict(counts.most_common()))
    log.info("filters %s: %s, reasons %s", [r.name for r in rules], result.stats(), result.counts)
    return result


def score_filters(result: FilterResult, docs: Sequence[dict]) -> dict[str, Any]:
    """Precision/recall/F1 of drops against ``label == "junk"``, plus drop rates by label and source.

    The per-label and per-source drop rates show what web-text defaults do to clean
    but unusual text (dictionary entries, verses, poetry, technical docs).
    """
    dropped = {d["id"] for d in result.dropped}
    tp = fp = fn = 0
    by_label: dict[str, list[int]] = {}
    by_source: dict[str, list[int]] = {}
    for doc in docs:
        if "label" not in doc:
            raise DataError(f"document {doc.get('id')!r}: missing field 'label' needed to score filters")
        positive, predicted = doc["label"] == "junk", doc["id"] in dropped
        tp += positive and predicted
        fp += predicted and not positive
        fn += positive and not predicted
        for table, key in ((by_label, doc["label"]), (by_source, doc.get("source"))):
            if key is not None:
                table.setdefault(str(key), [0, 0])
                table[str(key)][0] += predicted
                table[str(key)][1] += 1
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "precision": precision, "recall": recall, "f1": f1, "tp": tp, "fp": fp, "fn": fn,
        "dropped_frac_by_label": {k: d / n for k, (d, n) in sorted(by_label.items())},
        "dropped_frac_by_source": {k: d / n for k, (d, n) in sorted(by_source.items())},
    }  # fmt: skip
