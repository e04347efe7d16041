"""A tiny Hugging Face causal LM and tokenizer (GPT-2 architecture, a BPE trained on arithmetic text) written to a
folder, and DAPO-Math-17k rows in the real format: the offline stand-ins for the full profile's Qwen2.5-Math-1.5B and
DAPO-Math-17k."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURE = Path(__file__).parent / "fixtures" / "vip" / "dapo_math_17k_sample.jsonl"


def dapo_rows(n: int, seed: int = 0) -> list[dict]:
    """``n`` addition problems as DAPO-Math-17k rows (the fixture's first row as the template)."""
    import numpy as np

    template = json.loads(FIXTURE.read_text().splitlines()[0])
    head, tail = template["prompt"][0]["content"].split("What is $3+4$?")
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        a, b = (int(x) for x in rng.integers(0, 10, 2))
        rows.append(
            {
                **template,
                "prompt": [{"content": f"{head}What is ${a}+{b}$?{tail}", "role": "user"}],
                "reward_model": {"ground_truth": str(a + b), "style": "rule-lang"},
                "extra_info": {"index": f"fx{i}"},
            }
        )
    return rows


def write_dapo_jsonl(path: Path, n: int) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in dapo_rows(n)) + "\n")
    return path


def tiny_hf_policy(folder: Path) -> Path:
    """Save a 1-layer GPT-2 (d 32) with a 300-token BPE tokenizer (eos ``<eos>``, pad ``<pad>``) to ``folder``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    texts = [r["prompt"][0]["content"] + "\nAnswer: " + r["reward_model"]["ground_truth"] for r in dapo_rows(50)]
    tok.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=300, special_tokens=["<pad>", "<eos>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", pad_token="<pad>")
    torch.manual_seed(0)
    model = GPT2LMHeadModel(
        GPT2Config(
            vocab_size=len(fast),
            n_positions=256,
            n_embd=32,
            n_layer=1,
            n_head=2,
            eos_token_id=fast.eos_token_id,
            bos_token_id=fast.eos_token_id,
        )
    )
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder
