"""Checks of a rendered DVC plot (the Vega-Lite spec `dvc plots show --json` gives): data on both axes."""

from __future__ import annotations

import math


def numeric(value) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def encoding(spec: dict) -> dict:
    """The spec's encoding channels, a layered spec's (DVC's ``linear``) merged from its layers, outer first."""
    enc = dict(spec.get("encoding", {}))
    for layer in spec.get("layer", []):
        for channel, value in encoding(layer).items():
            enc.setdefault(channel, value)
    return enc


def check_plot(path: str, spec: dict) -> None:
    """The rendered Vega-Lite ``spec`` has rows, and x, y, colour and offset fields in every row; quantitative
    axes hold numbers (positive on a log scale); a category axis of numbers is ordered (bins, not classes)."""
    rows = spec["data"]["values"]
    assert rows, f"{path}: no data"
    enc = encoding(spec)
    for channel in ("x", "y", "color", "xOffset", "yOffset"):
        field = enc.get(channel, {}).get("field")
        if not field:
            continue
        assert all(field in row and str(row[field]) != "" for row in rows), f"{path}: {channel} field {field!r}"
        if channel in ("x", "y") and enc[channel]["type"] == "quantitative":
            bad = [row[field] for row in rows if not numeric(row[field])]
            assert not bad, f"{path}: {channel} is quantitative but {field!r} holds {bad[:3]}"
            if enc[channel].get("scale", {}).get("type") == "log":
                assert all(float(row[field]) > 0 for row in rows), f"{path}: log {channel} with values <= 0"
    types = {enc["x"]["type"], enc["y"]["type"]}
    assert "quantitative" in types, f"{path}: no quantitative axis"
    if types != {"quantitative"}:  # a bar chart: the category axis must not be all numbers counted as classes
        cat = "x" if enc["x"]["type"] != "quantitative" else "y"
        assert enc[cat]["type"] in ("nominal", "ordinal")
        if all(numeric(row[enc[cat]["field"]]) for row in rows):  # bins, not classes: ordered, e.g. a histogram
            assert enc[cat]["type"] == "ordinal", f"{path}: numbers {enc[cat]['field']!r} shown as unordered classes"
