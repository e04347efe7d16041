"""Every adaptation method of the card on a frozen :class:`~components.dka.vit.TinyViT`, by name.

``build(method, backbone, ...)`` returns a fresh copy of the backbone with the method's modules inserted, a new
linear head, and the optimiser's parameter groups: ``adapter`` (the inserted modules; the whole network for
full fine-tuning) and ``head``, so adapter and head get separate learning rates, as the card says.
LoRA goes through ``peft`` (``inject_adapter_in_model`` on the attention's fused ``qkv`` projection).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from torch import nn

from components.dka.adapters import DKA, Bottleneck, Convpass, matched_mid
from components.dka.vit import TinyViT
from components.errors import ParamsError

METHODS = ("linear", "full", "bottleneck", "bottleneck-matched", "convpass", "lora", "dka", "dka-large", "dka-small")


@dataclass(frozen=True)
class AdapterConfig:
    mid: int = 16  # d-hat: the paper's 16 for classification (the code's middle_dim = 10 in the sweep/README)
    k_large: int = 15
    k_small: int = 3
    convpass_mid: int = 8
    convpass_scale: float = 0.1
    lora_rank: int = 4
    lora_alpha: int = 8


@dataclass
class Built:
    model: TinyViT
    groups: dict[str, list[nn.Parameter]]  # "adapter" and/or "head"

    def trainable(self) -> int:
        return sum(p.numel() for g in self.groups.values() for p in g)


def _freeze(model: nn.Module) -> None:
    for p in model.parameters():
        p.requires_grad_(False)


def _insert_post(model: TinyViT, make) -> list[nn.Parameter]:
    params = []
    for blk in model.blocks:
        blk.post = make()
        params += list(blk.post.parameters())
    return params


def _lora(model: TinyViT, cfg: AdapterConfig) -> list[nn.Parameter]:
    from peft import LoraConfig, inject_adapter_in_model

    conf = LoraConfig(r=cfg.lora_rank, lora_alpha=cfg.lora_alpha, lora_dropout=0.0, target_modules=["qkv"], bias="none")
    inject_adapter_in_model(conf, model)
    params = []
    for name, p in model.named_parameters():
        is_lora = "lora_" in name
        p.requires_grad_(is_lora)
        if is_lora:
            params.append(p)
    return params


def build(method: str, backbone: TinyViT, *, n_classes: int, seed: int, cfg: AdapterConfig = AdapterConfig()) -> Built:
    """A fresh adapted copy of ``backbone`` for ``method`` (one of :data:`METHODS`)."""
    if method not in METHODS:
        raise ParamsError(f"unknown method {method!r}; use one of {list(METHODS)}")
    import torch

    torch.manual_seed(seed)  # adapter initialisation depends on the run's seed
    model = copy.deepcopy(backbone)
    model.reset_head(n_classes, seed)
    dim = model.config.dim
    if method == "full":
        params = [p for n, p in model.named_parameters() if not n.startswith("head.")]
        return Built(model.train(), {"adapter": params, "head": list(model.head.parameters())})
    _freeze(model)
    if method == "linear":
        adapter = []
    elif method in ("dka", "dka-large", "dka-small"):
        branches = {"dka": "both", "dka-large": "large", "dka-small": "small"}[method]
        adapter = _insert_post(model, lambda: DKA(dim, cfg.mid, cfg.k_large, cfg.k_small, branches))
    elif method == "bottleneck":
        adapter = _insert_post(model, lambda: Bottleneck(dim, cfg.mid))
    elif method == "bottleneck-matched":
        m = matched_mid(dim, cfg.mid, cfg.k_large, cfg.k_small)
        adapter = _insert_post(model, lambda: Bottleneck(dim, m))
    elif method == "convpass":
        adapter = []
        for blk in model.blocks:
            blk.side_attn, blk.side_mlp = Convpass(dim, cfg.convpass_mid), Convpass(dim, cfg.convpass_mid)
            blk.side_scale = cfg.convpass_scale
            adapter += [*blk.side_attn.parameters(), *blk.side_mlp.parameters()]
    else:  # lora
        adapter = _lora(model, cfg)
    for p in model.head.parameters():
        p.requires_grad_(True)
    groups = {"head": list(model.head.parameters())}
    if adapter:
        groups["adapter"] = adapter
    return Built(model.train(), groups)


ADAPTED_TYPE = "paperline-dka-adapted-vit"


def save_adapted(built: Built, method: str, n_classes: int, cfg: AdapterConfig, directory) -> None:
    """An adapted model as ``config.json`` (backbone config, method, adapter config) + ``model.safetensors``."""
    import dataclasses

    from safetensors.torch import save_file

    from components.io import atomic_path, write_json

    with atomic_path(directory, is_dir=True) as tmp:
        write_json(
            tmp / "config.json",
            {
                "model_type": ADAPTED_TYPE,
                "method": method,
                "n_classes": n_classes,
                "vit": dataclasses.asdict(built.model.config),
                "adapter": dataclasses.asdict(cfg),
            },
        )
        save_file(
            {k: v.detach().contiguous() for k, v in built.model.state_dict().items()}, str(tmp / "model.safetensors")
        )


def load_adapted(directory) -> TinyViT:
    """Rebuild a model written by :func:`save_adapted` (eval mode); a wrong folder is a DataError."""
    from pathlib import Path

    from safetensors.torch import load_file

    from components.dka.vit import ViTConfig
    from components.errors import DataError
    from components.io import read_json

    directory = Path(directory)
    raw = read_json(directory / "config.json")
    if not isinstance(raw, dict) or raw.get("model_type") != ADAPTED_TYPE:
        raise DataError(f"{directory / 'config.json'}: not a {ADAPTED_TYPE} config")
    base = TinyViT(ViTConfig(**raw["vit"]))
    built = build(raw["method"], base, n_classes=raw["n_classes"], seed=0, cfg=AdapterConfig(**raw["adapter"]))
    try:
        built.model.load_state_dict(load_file(str(directory / "model.safetensors")), strict=True)
    except (RuntimeError, OSError) as exc:
        raise DataError(f"{directory / 'model.safetensors'}: {str(exc).splitlines()[0]}") from None
    return built.model.eval()
