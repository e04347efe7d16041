"""ebt params: every preset validates; bad values fail before any work naming the key; bad files name the file;
the full profile's hub ids fail at once offline, and its loaders work on local fixtures in the real format."""

from __future__ import annotations

import json

import numpy as np
import pytest

from components.ebt.tokens import codec_for
from components.errors import DataError, OfflineError, ParamsError
from flows.ebt.data import _read_docs, windows
from flows.ebt.params import PRESETS, Params
from flows.runtime.params import resolve


@pytest.mark.parametrize("profile", list(PRESETS))
def test_presets_validate(profile):
    p = resolve(Params, PRESETS, slug="ebt", profile=profile)
    assert p.energy.mcmc_steps in p.eval.think_steps and p.data.test_novel not in p.data.train_novels


@pytest.mark.parametrize(
    "override, key",
    [
        ("data.train_novels=[emma,ulysses]", "ebt.data.train_novels: .*unknown novel"),  # an unknown name
        ("data.train_novels=[]", "ebt.data.train_novels"),  # an empty set
        ("data.test_novel=emma", "ebt.data: .*also in train_novels"),  # the test set leaks into training
        ("data.ood_sets=[kjv,reddit]", "ebt.data.ood_sets: .*unknown source"),
        ("claims.far_set=kjv", "ebt: .*far_set"),  # smoke has no kjv set
        ("model.widths=[66]", "ebt.model: .*heads of even size"),  # a width that does not split into heads (shape)
        ("eval.think_steps=[1,4]", "ebt: .*mcmc_steps"),  # the sweep must contain M_train
        ("eval.best_of=[4,8]", "ebt: .*must hold 1"),
        ("training.steps=0", "ebt.training.steps"),  # out of range
        ("energy.step_size=-5", "ebt.energy.step_size"),
        ("training.lr_grid=[0.01,2]", "ebt.training.lr_grid"),
        ("energy.step_size_grid=[20,0]", "ebt.energy.step_size_grid"),
        ("claims.power_deltas=[0,-2]", "ebt.claims.power_deltas"),
        ("claims.power_sims=-1", "ebt.claims.power_sims"),
    ],
)
def test_bad_values_name_the_key(override, key):
    with pytest.raises(ParamsError, match=key):
        resolve(Params, PRESETS, slug="ebt", profile="smoke", overrides=[override])


def test_a_source_in_the_wrong_format_names_its_file(tmp_path):
    bad = tmp_path / "austen.jsonl"
    bad.write_text('{"id": "a", "text": "fine"}\nnot json\n')
    with pytest.raises(DataError, match=r"austen.jsonl:2: not JSON Lines"):
        _read_docs(bad)
    bad.write_text("")
    with pytest.raises(DataError, match="austen.jsonl: no documents"):
        _read_docs(bad)
    with pytest.raises(DataError, match="shorter than one window"):
        windows(np.zeros(5, np.int64), 3, 33)


def test_full_profile_hub_ids_fail_at_once_offline(monkeypatch):
    from components.data.corpus.hf import stream_hf_text

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    full = PRESETS["full"]["data"]
    with pytest.raises(OfflineError, match="EleutherAI/gpt-neox-20b"):
        codec_for(full["hf_tokenizer"])
    with pytest.raises(OfflineError, match="togethercomputer/RedPajama-Data-V2"):
        stream_hf_text(full["hf_dataset"], config=full["hf_config"], text_field="raw_content")


def test_full_profile_loaders_on_local_fixtures(tmp_path, monkeypatch):
    """A RedPajama-V2-style JSONL (``raw_content``) streams offline; a saved tokenizer folder loads as the codec."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    from components.data.corpus.hf import stream_hf_text

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    rp = tmp_path / "rpv2.jsonl"
    rp.write_text(
        "".join(
            json.dumps({"raw_content": f"Document {i} about energy.", "doc_id": f"d{i}", "meta": "{}"}) + "\n"
            for i in range(4)
        )
    )
    docs = list(stream_hf_text(str(rp), text_field="raw_content"))
    assert len(docs) == 4 and docs[0]["text"].startswith("Document 0")
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel()
    tok.train_from_iterator(
        [d["text"] for d in docs] * 20,
        trainers.BpeTrainer(
            vocab_size=300, special_tokens=["<unk>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    PreTrainedTokenizerFast(tokenizer_object=tok).save_pretrained(tmp_path / "tok")
    codec = codec_for(str(tmp_path / "tok"))
    ids = codec.encode("Document 1 about energy.")
    assert codec.vocab_size == len(PreTrainedTokenizerFast.from_pretrained(tmp_path / "tok")) and len(ids) > 0
    assert "energy" in codec.decode(ids)
