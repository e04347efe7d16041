"""Learning-rate schedules: values at the phase boundaries."""

import pytest

from components.errors import ParamsError
from components.training.schedules import cosine_lr, wsd_lr

KW = dict(peak_lr=1.0, warmup_steps=4, decay_start=10, decay_steps=4)


def test_wsd_warmup_boundaries():
    assert wsd_lr(0, **KW) == pytest.approx(0.25)  # step 0 already trains
    assert wsd_lr(2, **KW) == pytest.approx(0.75)
    assert wsd_lr(3, **KW) == 1.0  # peak reached on the last warmup step


def test_wsd_stable_phase_is_flat():
    assert [wsd_lr(s, **KW) for s in range(4, 10)] == [1.0] * 6


def test_wsd_decay_boundaries():
    # 4 decay steps at 4/5, 3/5, 2/5, 1/5 of peak: none at peak, none at zero
    assert [wsd_lr(s, **KW) for s in range(10, 14)] == pytest.approx([0.8, 0.6, 0.4, 0.2])
    assert wsd_lr(14, **KW) == 0.0
    assert wsd_lr(100, **KW) == 0.0


def test_wsd_min_lr_floor():
    kw = {**KW, "peak_lr": 2.0, "min_lr_frac": 0.1}
    assert wsd_lr(14, **kw) == pytest.approx(0.2)
    assert wsd_lr(10, **kw) == pytest.approx(2.0 * (0.1 + 0.9 * 0.8))
    assert wsd_lr(5, **kw) == 2.0


def test_wsd_one_step_cooldown_halves_the_rate():
    assert wsd_lr(9, peak_lr=1.0, warmup_steps=0, decay_start=9, decay_steps=1) == pytest.approx(0.5)


def test_wsd_decay_inside_warmup_starts_from_the_reached_rate():
    lrs = [wsd_lr(s, peak_lr=1.0, warmup_steps=10, decay_start=5, decay_steps=4) for s in range(4, 10)]
    assert lrs[0] == pytest.approx(0.5)
    assert lrs[1:] == pytest.approx([0.4, 0.3, 0.2, 0.1, 0.0])


def test_cosine_boundaries():
    kw = dict(peak_lr=1.0, warmup_steps=2, total_steps=12, min_lr_frac=0.1)
    assert cosine_lr(0, **kw) == pytest.approx(0.5)
    assert cosine_lr(2, **kw) == pytest.approx(1.0)
    assert cosine_lr(7, **kw) == pytest.approx(0.55)  # halfway: mean of peak and floor
    assert cosine_lr(12, **kw) == pytest.approx(0.1)
    assert cosine_lr(50, **kw) == pytest.approx(0.1)


@pytest.mark.parametrize(
    "bad, name",
    [
        (dict(peak_lr=0.0), "peak_lr"),
        (dict(warmup_steps=-1), "warmup_steps"),
        (dict(decay_steps=0), "decay_steps"),
        (dict(min_lr_frac=1.5), "min_lr_frac"),
    ],
)
def test_bad_wsd_params_name_the_parameter(bad, name):
    with pytest.raises(ParamsError, match=name):
        wsd_lr(0, **{**KW, **bad})
