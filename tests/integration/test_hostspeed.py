"""The host-speed factor that puts CPU times from different hosts on one scale (benchmarks/hostspeed.py)."""

import pytest

from benchmarks import hostspeed, profiles

REF = {"python": 0.1, "small_ops": 0.2, "gemm": 0.4}


def test_factor_is_one_on_the_reference_host_and_the_geometric_mean_of_the_slowdowns():
    assert hostspeed.factor(dict(REF), REF) == 1.0
    assert hostspeed.factor({k: 2 * v for k, v in REF.items()}, REF) == 2.0
    # 4x, 1x, 0.25x: slower at one workload, faster at another -> geometric mean 1
    assert hostspeed.factor({"python": 0.4, "small_ops": 0.2, "gemm": 0.1}, REF) == 1.0
    assert hostspeed.factor({"python": 0.8, "small_ops": 0.2, "gemm": 0.4}, REF) == pytest.approx(2.0, rel=1e-3)


def test_factor_without_a_usable_reference_is_none():
    assert hostspeed.factor(dict(REF), {"python": 0.0, "small_ops": 0.0, "gemm": 0.0}) is None
    assert hostspeed.factor({}, REF) is None


def test_reference_cpu_divides_by_the_factor():
    assert profiles.reference_cpu(600.0, 2.0) == 300.0
    assert profiles.reference_cpu(600.0, None) is None
    assert profiles.reference_cpu(None, 1.5) is None


def test_measure_times_every_workload_and_restores_torch_threads():
    import torch

    before = torch.get_num_threads()
    res = hostspeed.measure(repeats=1)
    assert torch.get_num_threads() == before
    assert all(res[k] > 0 for k in hostspeed.REFERENCE)
    assert res["factor"] is not None and res["factor"] > 0
