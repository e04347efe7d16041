"""Plain data shared by the stage declarations and the registry: the stage record, the paper list.

A leaf module (imports nothing of paperline's), so every ``flows/<package>/spec.py``,
``flows.stage_specs`` and ``flows.registry`` can import it without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SHARED = "shared"  # owner of data stages that several papers reuse


@dataclass(frozen=True)
class StageSpec:
    """One DVC stage = one Prefect (sub)flow run of a paper's flow, restricted to this stage."""

    name: str
    module: str  # module holding ``run(ctx)``
    deps: tuple[str, ...]  # code and data paths (files or folders)
    params: tuple[str, ...]  # params.yaml keys (dotted)
    outs: tuple[str, ...]
    metrics: tuple[str, ...] = ()
    plots: tuple[str, ...] = ()
    # DVC plot properties per plots CSV file name, e.g. {"curve.csv": {"x": "step", "y": "loss", "template": "linear"}}
    plot_axes: dict[str, dict[str, str]] = field(default_factory=dict)
    after: tuple[str, ...] = ()  # "owner:stage" this stage reads from (also implied by deps)
    summary: str = ""


@dataclass(frozen=True)
class Paper:
    """A paper as its pipeline declares it: ``PAPER = Paper(...)`` in ``flows/<package>/spec.py``.

    ``number`` orders the papers table and ``paperline list`` (the nineteen cards keep their card numbers; a paper
    of your own takes the next free one, ``paperline new`` picks it); ``card`` is the file under
    ``../shared/papers/`` that describes it, empty for a paper without a card.
    """

    number: int
    slug: str
    title: str
    card: str = ""

    @property
    def package(self) -> str:
        return self.slug.replace("-", "_")


# Cards in ../shared/papers/ whose pipeline has not landed yet: `paperline list` shows them as planned and
# `paperline new <slug>` takes their number and title from here. A pipeline, once it exists, declares its own
# ``PAPER`` (which wins over an entry here), so the list of papers is open: any package under ``flows/`` with a
# ``spec.py`` declaring ``PAPER`` and ``STAGES`` is a pipeline (``flows.stage_specs`` finds them).
PLANNED = (
    Paper(
        7, "anthrobench", "AnthroBench: multi-turn evaluation of anthropomorphic LLM behaviours", "07-anthrobench.md"
    ),
    Paper(9, "cdra", "CDRA: critique-driven reasoning alignment with a personalised generative PRM", "09-cdra.md"),
    Paper(10, "got-r1", "GoT-R1: RL for semantic-spatial reasoning in autoregressive image generation", "10-got-r1.md"),
    Paper(
        16, "medgmae", "MedGMAE: masked autoencoding that reconstructs 3D Gaussians instead of voxels", "16-medgmae.md"
    ),
    Paper(
        17,
        "selfaug-decoding",
        "Self-Aug: query-aligned visual contrastive decoding with entropy-adaptive thresholding",
        "17-selfaug-decoding.md",
    ),
    Paper(
        18,
        "implicit-planning",
        '"What\'s the plan?": steering-based metrics for implicit planning in LMs',
        "18-implicit-planning.md",
    ),
)


REPORT_FILES = ("report.md", "report.html", "claims.json", "figures")
REPORT_CODE = ("components/evaluation", "components/reporting", "flows/runtime/report_stage.py")


@dataclass(frozen=True)
class Layout:
    """A paper's folders, declared once: ``spec.py`` builds its stages from it and the stage code imports the same
    names, so an output path is written in one place.

    ``data/<slug>/<name>`` holds stage outputs, ``reports/<slug>/`` the report; ``code`` lists the package's
    modules that every stage imports (``params.py`` and ``__init__.py`` always).
    """

    slug: str
    code: tuple[str, ...] = ()

    @property
    def package(self) -> str:
        return self.slug.replace("-", "_")

    @property
    def data(self) -> str:
        return f"data/{self.slug}"

    @property
    def reports(self) -> str:
        return f"reports/{self.slug}"

    def out(self, name: str) -> str:
        """A stage output folder or file under ``data/<slug>/``."""
        return f"{self.data}/{name}"

    def report(self, name: str) -> str:
        """A file under ``reports/<slug>/``."""
        return f"{self.reports}/{name}"

    def module_file(self, name: str) -> str:
        return f"flows/{self.package}/{name}.py"

    def shared_code(self) -> tuple[str, ...]:
        own = [self.module_file("params"), f"flows/{self.package}/__init__.py"]
        return tuple(dict.fromkeys([*own, *(self.module_file(c) for c in self.code)]))

    def param_keys(self, keys: tuple[str, ...]) -> tuple[str, ...]:
        """``profile`` first, then each key under this paper's section (``data`` -> ``<slug>.data``); a key
        that names another section (``shared.sources``) or is already prefixed stays as given."""
        out = ["profile"]
        for key in keys:
            head = key.split(".", 1)[0]
            out.append(key if head in (self.slug, SHARED, "profile") else f"{self.slug}.{key}")
        return tuple(dict.fromkeys(out))

    def stage(
        self,
        name: str,
        *,
        reads: tuple[str, ...] = (),
        code: tuple[str, ...] = (),
        params: tuple[str, ...] = (),
        writes: tuple[str, ...] = (),
        after: tuple[str, ...] = (),
        summary: str = "",
        **extra,
    ) -> StageSpec:
        """A stage whose module is ``flows.<package>.<name>``: its deps are that module, the package's shared code,
        ``code`` (other repo paths) and ``reads`` (data it reads); ``writes`` are names under ``data/<slug>/``
        (or full paths); ``params`` are keys of the paper's section (``profile`` is always a dependency)."""
        return StageSpec(
            name=name,
            module=f"flows.{self.package}.{name}",
            deps=tuple(dict.fromkeys((self.module_file(name), *self.shared_code(), *code, *reads))),
            params=self.param_keys(params),
            outs=tuple(w if "/" in w else self.out(w) for w in writes),
            after=after,
            summary=summary,
            **extra,
        )

    def report_stage(
        self,
        *,
        reads: tuple[str, ...],
        code: tuple[str, ...] = (),
        params: tuple[str, ...] = (),
        plots: dict[str, dict[str, str]] | None = None,
        after: tuple[str, ...] = (),
        summary: str = "",
    ) -> StageSpec:
        """The ``report`` stage: report.md/.html, claims.json, figures and metrics.json under ``reports/<slug>/``,
        one DVC plots CSV per key of ``plots`` (its axes as the value), the package's ``claims.py`` and the shared
        claims and reporting code as deps, and the ``claims`` params section."""
        plots = dict(plots or {})
        return self.stage(
            "report",
            reads=reads,
            code=(self.module_file("claims"), *code, *REPORT_CODE),
            params=(*params, "claims"),
            after=after,
            summary=summary,
            writes=tuple(self.report(f) for f in REPORT_FILES),
            metrics=(self.report("metrics.json"),),
            plots=tuple(self.report(f"plots/{name}") for name in plots),
            plot_axes=plots,
        )
