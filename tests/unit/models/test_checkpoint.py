"""One model-folder format for the tiny LM, EBT and DKA's ViT: round trip, and every wrong folder a DataError."""

from __future__ import annotations

import json

import pytest
import torch

from components.errors import DataError
from components.models import checkpoint
from components.models.tiny_lm import TinyLM, TinyLMConfig, load_model, save_model


def _lm(tied: bool = True) -> TinyLM:
    return TinyLM(
        TinyLMConfig(vocab_size=50, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_seq_len=8, tie_embeddings=tied)
    )


@pytest.mark.parametrize("tied", [True, False])
def test_a_saved_model_loads_with_the_same_weights_and_config(tmp_path, tied):
    model = _lm(tied)
    save_model(model, tmp_path / "m")
    back = load_model(tmp_path / "m")
    assert back.config == model.config and not back.training
    for (name, a), (_, b) in zip(model.state_dict().items(), back.state_dict().items()):
        assert torch.equal(a, b), name


def test_every_wrong_folder_names_its_file(tmp_path):
    save_model(_lm(), tmp_path / "m")
    config = json.loads((tmp_path / "m/config.json").read_text())

    (tmp_path / "m/config.json").write_text(json.dumps({**config, "model_type": "other"}))
    with pytest.raises(DataError, match="config.json: not a paperline-tiny-lm config"):
        load_model(tmp_path / "m")
    (tmp_path / "m/config.json").write_text(json.dumps({**config, "d_model": 32}))  # weights of another shape
    with pytest.raises(DataError, match="model.safetensors: weights do not match"):
        load_model(tmp_path / "m")
    (tmp_path / "m/config.json").write_text(json.dumps({**config, "tie_embeddings": False}))  # head missing
    with pytest.raises(DataError, match=r"missing \['head.weight'\]"):
        load_model(tmp_path / "m")
    (tmp_path / "m/config.json").write_text(json.dumps(config))
    (tmp_path / "m/model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(DataError, match="not a safetensors file"):
        load_model(tmp_path / "m")
    (tmp_path / "m/model.safetensors").unlink()
    with pytest.raises(DataError, match="file not found"):
        checkpoint.load(tmp_path / "m", TinyLM, TinyLMConfig, "paperline-tiny-lm")
