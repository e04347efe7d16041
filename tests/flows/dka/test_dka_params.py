"""dka params and inputs: presets validate; bad values fail naming the key (exit 2 from the CLI); files in the
wrong format name the file; the full profile's loaders read local fixtures in the real formats and fail at once,
naming the id, when offline."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from components.dka import sources
from components.dka.vit import load_model
from components.errors import DataError, OfflineError, ParamsError
from flows.dka.params import PRESETS, Params
from flows.runtime.params import resolve


@pytest.mark.parametrize("profile", list(PRESETS))
def test_presets_validate(profile):
    p = resolve(Params, PRESETS, slug="dka", profile=profile)
    assert p.claims.low_fraction in [r.fraction for r in p.adapt.regimes]


@pytest.mark.parametrize(
    "override, key",
    [
        ("adapt.methods=[linear, dka, vpt]", "dka.adapt.methods: .*unknown method"),  # an unknown name
        ("adapt.k_large=4", "dka.adapt: .*k_large = 4: must be odd"),  # wrong shape
        ("adapt.regimes=[]", "dka.adapt.regimes"),  # an empty set
        ("claims.low_fraction=0.05", "dka: .*claims fraction 0.05"),  # claims regime not run
        ("adapt.regimes=[{fraction: 1.5, seeds: [0], steps: 1}]", "dka.adapt.regimes.0.fraction"),  # out of range
        ("adapt.head_lrs=[0.0]", "dka.adapt.head_lrs"),
        ("adapt.erf_images=100", "dka: .*adapt.erf_images 100 exceeds data.n_test 80"),  # smoke's n_test
        ("adapt.erf_images=5000", "dka.adapt.erf_images: .*less than or equal to 2000"),
        ("data.source=dicom", "dka.data.source: .*unknown source"),
        ("pretrain.dim=90", "dka.pretrain: .*does not split into 4 heads"),
        ("claims.thresholds=[0.0]", "dka.claims.thresholds"),
        (
            "adapt.linear_lrs=[0.01, 0.1]",
            "dka.adapt: .*linear_lrs: 2 distinct rate.*same sweep budget",
        ),  # unequal tuning
    ],
)
def test_bad_values_name_the_key(override, key):
    with pytest.raises(ParamsError, match=key):
        resolve(Params, PRESETS, slug="dka", profile="smoke", overrides=[override])


def test_a_low_regime_without_the_claims_methods_fails():
    with pytest.raises(ParamsError, match=r"regime 0.1 must run \['dka', 'bottleneck-matched'\]"):
        resolve(
            Params,
            PRESETS,
            slug="dka",
            profile="smoke",
            overrides=[
                "adapt.regimes=[{fraction: 0.1, seeds: [0, 1], steps: 2, methods: [linear, bottleneck]}, "
                "{fraction: 1.0, seeds: [0], steps: 2}]"
            ],
        )


def test_files_in_the_wrong_format_name_the_file(tmp_path):
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(b"not gzip")
    with pytest.raises(DataError, match="train-images-idx3-ubyte.gz: not a gzipped idx"):
        sources.load_fashion("train", tmp_path)
    with gzip.open(tmp_path / "train-images-idx3-ubyte.gz", "wb") as fh:
        fh.write(b"\x00\x00\x08\x03" + (2).to_bytes(4, "big") + (28).to_bytes(4, "big") * 2 + b"\x00" * 10)
    with pytest.raises(DataError, match="bytes of data but the header says"):
        sources.load_fashion("train", tmp_path)
    with pytest.raises(DataError, match="t10k-images-idx3-ubyte.gz: file not found"):
        sources.load_fashion("test", tmp_path)
    (tmp_path / "bad.npz").write_text("no")
    with pytest.raises(DataError, match="bad.npz: not a MedMNIST"):
        sources.load_medmnist(str(tmp_path / "bad.npz"))
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text('{"model_type": "other"}')
    with pytest.raises(DataError, match="config.json: not a paperline-dka-tiny-vit"):
        load_model(tmp_path / "model")


def test_full_profile_loaders_read_real_format_fixtures(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(0)
    np.savez(
        tmp_path / "breastmnist_64.npz",
        train_images=rng.integers(0, 255, (6, 64, 64), dtype=np.uint8),
        train_labels=np.array([[0], [1], [0], [1], [0], [1]]),
        val_images=np.zeros((2, 64, 64), np.uint8),
        val_labels=np.array([[0], [1]]),
        test_images=np.zeros((2, 64, 64), np.uint8),
        test_labels=np.array([[1], [0]]),
    )
    d = sources.load_medmnist(str(tmp_path / "breastmnist_64.npz"))
    assert d["train_x"].shape == (6, 1, 64, 64) and d["test_y"].tolist() == [1, 0]
    assert d["train_x"].min() >= -1.0 and d["train_x"].max() <= 1.0
    for split in ("train", "test"):
        for c in ("benign", "malignant"):
            (tmp_path / "busi" / split / c).mkdir(parents=True)
            Image.fromarray(rng.integers(0, 255, (80, 90), dtype=np.uint8)).save(
                tmp_path / "busi" / split / c / "a.png"
            )
    f = sources.load_image_folder(tmp_path / "busi")
    assert f["train_x"].shape == (2, 1, 64, 64) and f["train_y"].tolist() == [0, 1]


def test_paper_scale_ids_fail_at_once_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    p = resolve(Params, PRESETS, slug="dka", profile="full")
    with pytest.raises(OfflineError, match=p.pretrain.hf_model):
        sources.load_timm_vit(p.pretrain.hf_model)
    with pytest.raises(OfflineError, match="medmnist 'breastmnist'"):
        sources.load_medmnist("breastmnist")
    with pytest.raises(OfflineError, match="image folder 'isic2019'"):
        sources.load_image_folder("isic2019")
