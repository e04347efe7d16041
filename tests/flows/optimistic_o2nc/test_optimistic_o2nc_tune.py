"""The tuning script behind optimistic-o2nc's frozen settings: same effort for every method, runnable, --help."""

from __future__ import annotations

import pytest

from flows.optimistic_o2nc import tune as T


def test_every_method_gets_the_same_number_of_settings_and_o2nc_methods_one_grid():
    sizes = {m: len(T.grid(m)) for m in (*T.BASELINES, *T.O2NC_METHODS)}
    assert set(sizes.values()) == {T.N_CONFIGS} == {80}
    shared = [[{k: c[k] for k in ("eta", "radius", "episode")} for c in T.grid(m)] for m in T.O2NC_METHODS]
    assert all(g == shared[0] for g in shared)
    assert all(c["eta"] < 2 for c in T.grid("cmo23"))  # the fixed-point loop must contract
    assert all("inner" not in c for c in T.grid("cmo23")) and all(c["inner_steps"] == 2 for c in T.grid("cmo23-k2"))


def test_a_small_search_runs_and_picks_a_setting_of_the_grid():
    res = T.tune(["odog", "gd"], eps=(0.1,), seeds=(0,), budget=400)
    assert set(res) == {"odog", "gd"}
    for m, r in res.items():
        assert r["n_configs"] == T.N_CONFIGS and r["best"] in T.grid(m) and r["runs"] == 1 and r["reached"] == 1


def test_help_and_frozen_settings_in_the_search_keys(capsys):
    with pytest.raises(SystemExit) as exc:
        T.main(["--help"])
    assert exc.value.code == 0 and "--check" in capsys.readouterr().out
    frozen = T.frozen()
    assert set(frozen) == {*T.BASELINES, *T.O2NC_METHODS}
    assert frozen["cmo23-k2"]["inner_steps"] == 2 and "inner_steps" not in frozen["cmo23"]
