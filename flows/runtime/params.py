"""Params: profiles, params.yaml, ``--set`` overrides, and validation before any work.

Resolution order for one paper (later wins):
1. the profile's preset (``smoke``, ``default`` or ``full``), declared in the paper's params module;
2. explicit (non-null) values in the paper's section of ``params.yaml`` (an empty value, i.e. ``null``, means
   "the preset");
3. ``--set key=value`` on the command line.

The merged dict is validated by the paper's pydantic model (unknown keys are
forbidden), and any problem is reported as one line naming the key path.

Bounds shared by every pipeline live here, so a typo fails at validation instead
of exhausting memory or running for a year: every float of every section must be
finite (``allow_inf_nan=False`` on :class:`Section`), and the constrained types
below (:data:`Seed`, :data:`Seeds`, :data:`Resamples`, :data:`ModelSize`,
:data:`Count`, :data:`Windows`, :data:`Steps`, :data:`Width`) carry the upper
bounds, each explained in its ``Field`` description. The types carry only upper
bounds (and ``Seed`` its ``ge=0``): a field keeps its own lower bound.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from components.errors import ParamsError
from flows.runtime.params_template import drop_unset_entries, null_template  # noqa: F401 (re-exported)

PROFILES = ("smoke", "default", "full")

MAX_SEED = 2**32 - 1


def _not_bool(value: Any) -> Any:
    """``yes``/``true`` is not a number: YAML reads it as a bool, which lax ints would turn into 1."""
    if isinstance(value, bool):
        raise ValueError("expected an integer, got a boolean")
    return value


MAX_SEEDS = 1_000
MAX_RESAMPLES = 1_000_000
MAX_MODEL_PARAMS = 1_000_000_000
MAX_COUNT = 10_000_000
MAX_WINDOWS = 100_000
MAX_STEPS = 1_000_000_000
MAX_WIDTH = 65_536

Seed = Annotated[
    int,
    BeforeValidator(_not_bool),
    Field(
        ge=0,
        le=MAX_SEED,
        description=("a random seed: 0 <= seed < 2**32, the range numpy's and torch's seeding accept"),
    ),
]
Seeds = Annotated[
    list[Seed],
    Field(
        max_length=MAX_SEEDS,
        description=(f"seeds, each one a full repetition of the runs it seeds: at most {MAX_SEEDS:,}"),
    ),
]
Resamples = Annotated[
    int,
    BeforeValidator(_not_bool),
    Field(
        le=MAX_RESAMPLES,
        description=(
            f"bootstrap or permutation resamples: at most {MAX_RESAMPLES:,} (percentile CIs are stable long before; "
            "each resample keeps an index row in memory)"
        ),
    ),
]
ModelSize = Annotated[
    int,
    BeforeValidator(_not_bool),
    Field(
        le=MAX_MODEL_PARAMS,
        description=(
            f"a model's parameter count: at most {MAX_MODEL_PARAMS:,} (float32 weights, gradients and Adam state "
            "of 1e9 parameters already take 16 GB)"
        ),
    ),
]
Count = Annotated[
    int,
    BeforeValidator(_not_bool),
    Field(
        le=MAX_COUNT,
        description=(
            f"a number of items held in memory at once (documents, prompts, episodes, subjects, nodes, questions): "
            f"at most {MAX_COUNT:,}"
        ),
    ),
]
Windows = Annotated[
    int,
    BeforeValidator(_not_bool),
    Field(
        le=MAX_WINDOWS,
        description=(
            f"evaluation windows per set: at most {MAX_WINDOWS:,} (they are stacked into one tensor; 1e5 windows "
            "of 8,192 int64 tokens is 6.5 GB)"
        ),
    ),
]
Steps = Annotated[
    int,
    BeforeValidator(_not_bool),
    Field(
        le=MAX_STEPS,
        description=(
            f"iterations, epochs, gradient calls, token budgets or characters: at most {MAX_STEPS:,} "
            "(more runs for months on a CPU and overflows some int32 counters)"
        ),
    ),
]
Width = Annotated[
    int,
    BeforeValidator(_not_bool),
    Field(
        le=MAX_WIDTH,
        description=(
            f"a layer width, feature dimension, batch size, sequence length or vocabulary: at most {MAX_WIDTH:,}"
        ),
    ),
]


class Section(BaseModel):
    """Base for every params (sub)section: unknown keys are errors, floats must be finite,
    values are validated on assignment."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False, allow_inf_nan=False)


class ClaimsBase(Section):
    """The claims settings every paper has; a paper's ``ClaimsParams`` extends it with its bands and margins.

    Every claim that is not reproduced carries its design's power (``shared/papers/README.md``: could the run
    have said "reproduced" had the effect been there?): the runtime opens a power plan from these settings
    around each stage (:meth:`power_plan`), and the kit attaches the check (``components.evaluation.power``)."""

    level: float = Field(0.95, gt=0.5, lt=1, description="confidence level of every interval")
    n_resamples: Resamples = Field(10_000, ge=100, description="bootstrap resamples per claim")
    power_deltas: list[float] = Field(
        [0.0, 1.0, 2.0, 5.0, 10.0],
        min_length=1,
        description="planted effects of the power check, in multiples of each claim's no-effect band",
    )
    power_sims: int = Field(
        100,
        ge=0,
        le=10_000,
        description="simulated runs per planted effect for claims not reproduced (0: no power check)",
    )
    power_resamples: Resamples = Field(1_000, ge=100, description="bootstrap resamples of each simulated run")

    @field_validator("power_deltas")
    @classmethod
    def _power_deltas(cls, v: list[float]) -> list[float]:
        if any(x < 0 or x > 1000 for x in v):
            raise ValueError("power_deltas must be between 0 and 1000 (multiples of the band)")
        return v

    def power_plan(self, seed: int = 0):
        """The plan :func:`components.evaluation.power.planning` opens for a stage."""
        from components.evaluation.planted import PowerPlan  # the kit's power module loads numpy/scipy

        return PowerPlan(tuple(self.power_deltas), self.power_sims, self.power_resamples, seed)


MAX_YAML_NODES = 100_000  # composed nodes per params.yaml (aliases counted each time they are used)
MAX_INT_DIGITS = 30  # a params integer longer than this is a typo (or an attack), not a setting
MAX_ECHO = 80  # characters of a value echoed in an error


def short(value: Any, limit: int = MAX_ECHO) -> str:
    """``repr(value)`` cut to ``limit`` characters: an error never echoes a huge value whole."""
    import reprlib

    r = reprlib.Repr()
    r.maxstring = r.maxother = r.maxlong = limit
    r.maxlist = r.maxdict = r.maxtuple = r.maxset = 6
    text = r.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _default_data_roots() -> list[Path]:
    """Folders outside the checkout that path params may name: ``PAPERLINE_DATA_ROOTS`` (``os.pathsep``-separated)
    and the system datasets folder (``/usr/share/datasets``)."""
    import os

    extra = [Path(p) for p in os.environ.get("PAPERLINE_DATA_ROOTS", "").split(os.pathsep) if p.strip()]
    return [*extra, Path("/usr/share/datasets")]


def _project_path(value: Any) -> Any:
    """A path param must resolve (symlinks and ``..`` included) inside the checkout or a data root."""
    if value is None:
        return value
    if not isinstance(value, str | Path):
        raise ValueError(f"expected a path string, got {type(value).__name__}")
    from flows.runtime.paths import allowed_roots
    from flows.runtime.settings import find_root

    root = find_root()
    path = Path(value)
    path = path if path.is_absolute() else root / path
    resolved = path.resolve()
    for base in [*allowed_roots(root), *(p.resolve() for p in _default_data_roots())]:
        if resolved == base or base in resolved.parents:
            return value
    raise ValueError(
        "path resolves outside the checkout (allowed: the checkout, its data/ and reports/, PAPERLINE_CACHE_DIR, "
        "PAPERLINE_DATA_ROOTS); refused"
    )


ProjectPath = Annotated[
    str,
    AfterValidator(_project_path),
    Field(description="a file or folder inside the checkout (or a folder named in PAPERLINE_DATA_ROOTS)"),
]


PowerClaims = ClaimsBase  # older name: every paper's claims now carry the power settings


class Resources(Section):
    """How much of the machine a run may use."""

    workers: int = Field(
        1,
        ge=1,
        le=64,
        description=(
            "parallel runs of a fan-out stage (the default runner is process:<workers>; --runner overrides it)"
        ),
    )
    threads: int = Field(1, ge=1, le=64, description="torch threads per worker (1: the machine is shared)")


class PaperParams(Section):
    """Base of every paper's params model: the sections all papers share.

    A paper's ``Params`` extends it, narrowing ``claims`` to its own ``ClaimsParams``
    (a subclass of :class:`ClaimsBase`).
    """

    claims: ClaimsBase = Field(default_factory=ClaimsBase)
    resources: Resources = Field(default_factory=Resources)
    progress: bool = Field(True, description="tqdm progress bars on long loops")


class Replace(dict):
    """In a preset's changes: this mapping replaces the default's instead of merging into it
    (a smaller ``methods`` table, say)."""


def presets(default: Mapping[str, Any], *, smoke: Mapping[str, Any], full: Mapping[str, Any]) -> dict[str, dict]:
    """The three profiles from the default one and what smoke and full change: a mapping merges into the
    default's recursively (wrap it in :class:`Replace` to replace it whole), any other value replaces it."""
    base = deep_merge({}, default, skip_none=False)
    return {
        "smoke": deep_merge(base, smoke, skip_none=False),
        "default": base,
        "full": deep_merge(base, full, skip_none=False),
    }


def check_known(values: list[str], allowed, what: str) -> list[str]:
    """For field validators: every value must be one of ``allowed`` (the error lists them)."""
    bad = [v for v in values if v not in allowed]
    if bad:
        named = f"{what} {short(bad[0])}" if len(bad) == 1 else f"{what}s {short(bad)}"
        raise ValueError(f"unknown {named}; use one of {list(allowed)}")
    return values


def check_profile(profile: str) -> str:
    if profile not in PROFILES:
        raise ParamsError(f"unknown profile {short(profile)}; choose one of: {', '.join(PROFILES)}")
    return profile


def load_params_file(path: Path) -> dict[str, Any]:
    """Read params.yaml; a missing file is an empty mapping, a corrupt one an error naming it.

    Corrupt means: a directory or unreadable file, bytes that are not UTF-8 text,
    YAML that does not parse (reported on one line with its position), or a top
    level that is not a mapping.
    """
    if path.is_dir():
        raise ParamsError(f"{path}: is a directory, expected the params YAML file")
    if not path.exists():
        return {}
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ParamsError(f"{path}: cannot read ({exc.strerror or type(exc).__name__})") from None
    if b"\x00" in raw:
        raise ParamsError(f"{path}: contains NUL bytes (a binary or UTF-16 file); expected UTF-8 YAML")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ParamsError(f"{path}:{line}: not UTF-8 text (byte {raw[exc.start]:#04x}); expected UTF-8 YAML") from None
    try:
        data = _bounded_load(text, str(path)) or {}
    except ParamsError:
        raise
    except yaml.YAMLError as exc:
        raise ParamsError(f"{path}: not valid YAML ({_yaml_problem(exc)})") from None
    except RecursionError:
        raise ParamsError(f"{path}: not valid YAML (nested too deeply)") from None
    if not isinstance(data, dict):
        raise ParamsError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    return data


class _BoundedLoader(yaml.SafeLoader):
    """A safe loader that counts composed nodes, every use of an alias counting its whole subtree, and refuses a
    document past :data:`MAX_YAML_NODES` before building it ("billion laughs": a few hundred bytes of nested
    aliases expand to gigabytes), and integers longer than :data:`MAX_INT_DIGITS` digits."""

    def __init__(self, stream, what: str):
        super().__init__(stream)
        self._what = what
        self._sizes: dict[int, int] = {}  # id(node) -> nodes in its subtree, aliases expanded

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            node = super().compose_node(parent, index)
            self._count(self._sizes.get(id(node), 1))
            return node
        before = self._total
        node = super().compose_node(parent, index)
        size = self._total - before + 1
        self._sizes[id(node)] = size
        self._count(1)
        if (
            isinstance(node, yaml.ScalarNode)
            and node.tag == "tag:yaml.org,2002:int"
            or (isinstance(node, yaml.ScalarNode) and node.tag is None)
        ):
            digits = sum(c.isdigit() for c in node.value)
            if digits > MAX_INT_DIGITS and node.value.lstrip("+-").replace("_", "").isdigit():
                raise ParamsError(
                    f"{self._what}: line {node.start_mark.line + 1}: an integer of {digits} digits; "
                    f"at most {MAX_INT_DIGITS}"
                )
        return node

    _total = 0

    def _count(self, n: int) -> None:
        self._total += n
        if self._total > MAX_YAML_NODES:
            raise ParamsError(
                f"{self._what}: more than {MAX_YAML_NODES:,} YAML nodes once aliases are expanded "
                "(nested aliases, a 'billion laughs' document?); refused"
            )


def _bounded_load(text: str, what: str) -> Any:
    loader = _BoundedLoader(text, what)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error on one line: the problem and where (PyYAML's own message spans several lines)."""
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or str(exc).splitlines()[0]
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return " ".join(f"{problem}{where}".split())


def parse_overrides(items: Iterable[str], slug: str) -> dict[str, Any]:
    """Turn ``["training.lr=3e-4", ...]`` into a nested dict; values are parsed as YAML scalars/lists."""
    nested: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise ParamsError(f"--set {item!r}: expected KEY=VALUE (for example training.lr=3e-4)")
        key, raw = item.split("=", 1)
        key = key.strip()
        if key.startswith(slug + "."):
            key = key[len(slug) + 1 :]
        if not key or any(not part for part in key.split(".")):
            raise ParamsError(f"--set {item!r}: empty key")
        try:
            value = _bounded_load(raw, f"--set {key}") if raw.strip() else ""
        except yaml.YAMLError:
            value = raw
        _set_path(nested, key.split("."), value)
    return nested


def _set_path(tree: dict[str, Any], parts: list[str], value: Any) -> None:
    for part in parts[:-1]:
        tree = tree.setdefault(part, {})
        if not isinstance(tree, dict):
            raise ParamsError(f"--set {'.'.join(parts)}: {part!r} is not a section")
    tree[parts[-1]] = value


def deep_merge(base: Mapping[str, Any], top: Mapping[str, Any], *, skip_none: bool) -> dict[str, Any]:
    """Merge ``top`` onto ``base`` recursively; with ``skip_none`` a None in ``top`` keeps ``base``; a
    :class:`Replace` in ``top`` replaces ``base``'s mapping whole."""
    out = copy.deepcopy(dict(base))
    for key, value in top.items():
        if value is None and skip_none:
            continue
        if isinstance(value, Replace):
            out[key] = copy.deepcopy(dict(value))
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value, skip_none=skip_none)
        elif isinstance(value, Mapping) and skip_none and key not in out:
            out[key] = deep_merge({}, value, skip_none=True)  # a section the preset leaves to its defaults
        else:
            out[key] = copy.deepcopy(value)
    return out


def format_validation_error(exc: ValidationError, slug: str, model: type[BaseModel] | None = None) -> str:
    """One line per problem: ``slug.key.path: reason (got value)``; a misspelt key gets "did you mean"."""
    lines = []
    for err in exc.errors():
        path = ".".join(str(p) for p in (slug, *err["loc"]))
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key" + _did_you_mean(str(err["loc"][-1]), _sibling_keys(model, err["loc"][:-1]))
        got = err.get("input")
        suffix = f" (got {short(got)})" if err["type"] != "extra_forbidden" and not isinstance(got, dict) else ""
        lines.append(f"{path}: {msg}{suffix}")
    more = f"; ... and {len(lines) - 3} more" if len(lines) > 3 else ""
    return "; ".join(lines[:3]) + more


def _sibling_keys(model: type[BaseModel] | None, loc: tuple) -> list[str]:
    """The keys the section at ``loc`` of ``model`` accepts ([] where it is not a params model)."""
    node = model
    for part in loc:
        field = node.model_fields.get(str(part)) if node is not None else None
        ann = field.annotation if field is not None else None
        node = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
    return list(node.model_fields) if node is not None else []


def _did_you_mean(name: str, choices: list[str]) -> str:
    from components.errors import closest

    found = closest(name, choices)
    return f" (did you mean {found!r}?)" if found else ""


def resolve(
    model: type[BaseModel],
    presets: Mapping[str, Mapping[str, Any]],
    *,
    slug: str,
    profile: str,
    file_section: Mapping[str, Any] | None = None,
    overrides: Iterable[str] = (),
) -> BaseModel:
    """Validate preset ← params.yaml ← --set for one paper, failing before any work."""
    check_profile(profile)
    if file_section is not None and not isinstance(file_section, Mapping):
        raise ParamsError(f"params.yaml: section {slug!r} must be a mapping")
    file_section = drop_unset_entries(model, file_section or {}, presets[profile])  # template-only map entries
    merged = deep_merge(presets[profile], file_section, skip_none=True)
    merged = deep_merge(merged, parse_overrides(overrides, slug), skip_none=False)
    try:
        return model.model_validate(merged)
    except ValidationError as exc:
        raise ParamsError(format_validation_error(exc, slug, model)) from None
