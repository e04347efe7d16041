"""LLMRewriter and the local-folder loader on a tiny random Llama (no download, a few seconds)."""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from components.data.rewrite import LLMRewriter  # noqa: E402
from components.errors import ParamsError  # noqa: E402
from components.models.causal_lm import CACHE_META, load_causal_lm, write_model_cache  # noqa: E402

CHAT = (
    "{% for m in messages %}{{'<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{'<|im_start|>assistant\n'}}{% endif %}"
)
TEXTS = [
    "The kernel scheduler picks the next task.",
    "It is a truth universally acknowledged that a single man "
    "in possession of a good fortune must be in want of a wife.",
    "Short.",
]


@pytest.fixture(scope="module")
def tiny():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer, tk.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=["<pad>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tk.train_from_iterator(TEXTS * 10, trainer)
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="<|im_end|>")
    tok.chat_template = CHAT
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
    )
    model = transformers.LlamaForCausalLM(cfg).eval()
    model.name_or_path = "tiny-llama"
    return model, tok


def test_batched_left_padded_generation_matches_one_by_one(tiny):
    rw = LLMRewriter(*tiny, max_new_tokens=6, batch_size=3)
    batched = rw.rewrite(TEXTS, "qa")
    assert len(batched) == 3 and all(isinstance(t, str) for t in batched)
    assert batched == [rw.rewrite([t], "qa")[0] for t in TEXTS]
    assert rw.rewrite(TEXTS, "qa") == batched  # greedy is deterministic
    assert rw.name == "tiny-llama"


def test_long_inputs_are_cut_to_max_input_tokens(tiny):
    rw = LLMRewriter(*tiny, max_new_tokens=4, max_input_tokens=8)
    head = "The kernel scheduler picks the next task. " * 3
    assert rw.rewrite([head + "It is a truth."], "hq") == rw.rewrite([head + "Short, short, short."], "hq")


def test_sampling_is_seeded_and_leaves_the_callers_rng_alone(tiny):
    a = LLMRewriter(*tiny, max_new_tokens=8, temperature=1.0, seed=1)
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    first = a.rewrite(TEXTS[:2], "textbook")
    assert torch.equal(torch.rand(3), expected)
    assert LLMRewriter(*tiny, max_new_tokens=8, temperature=1.0, seed=1).rewrite(TEXTS[:2], "textbook") == first
    assert LLMRewriter(*tiny, max_new_tokens=8, temperature=1.0, seed=2).rewrite(TEXTS[:2], "textbook") != first


def test_cache_key_changes_with_generation_settings_and_style(tiny):
    base = LLMRewriter(*tiny, max_new_tokens=8)
    assert base.cache_key("qa") == LLMRewriter(*tiny, max_new_tokens=8).cache_key("qa")
    assert base.cache_key("qa") != LLMRewriter(*tiny, max_new_tokens=9).cache_key("qa")
    assert base.cache_key("qa") != base.cache_key("hq")


def test_bad_settings_are_params_errors(tiny):
    model, tok = tiny
    with pytest.raises(ParamsError, match="batch_size"):
        LLMRewriter(model, tok, batch_size=0)
    with pytest.raises(ParamsError, match="style"):
        LLMRewriter(model, tok).rewrite(["x"], "poem")


def test_local_folder_loads_in_eval_fp32_on_cpu(tiny, tmp_path):
    model, tok = tiny
    model.save_pretrained(tmp_path / "m")
    tok.save_pretrained(tmp_path / "m")
    loaded, loaded_tok = load_causal_lm(str(tmp_path / "m"), cache_dir=tmp_path / "cache", offline=True)
    assert not loaded.training and loaded.dtype == torch.float32 and loaded.device.type == "cpu"
    assert loaded.name_or_path == str(tmp_path / "m")
    assert loaded_tok.chat_template == CHAT


def test_a_failed_cache_write_leaves_no_cache(tiny, tmp_path, monkeypatch):
    model, tok = tiny
    target = tmp_path / "cache" / "smollm2-135m-instruct"

    def killed(*a, **k):
        raise KeyboardInterrupt("killed while saving the tokenizer")

    monkeypatch.setattr(tok, "save_pretrained", killed)
    with pytest.raises(KeyboardInterrupt):
        write_model_cache(model, tok, target, {"spec": "x"})
    assert not target.exists() and list(target.parent.iterdir()) == []
    monkeypatch.undo()
    write_model_cache(model, tok, target, {"spec": "x"})
    assert (target / "model.safetensors").is_file() and (target / CACHE_META).is_file()
