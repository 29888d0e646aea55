"""What preflight, the memory model and the planner need to know about the model: sizes, not weights.

`model_facts(path)` reads `<path>/config.json` when the path is a local folder, else the built-in Qwen3 table by
name. A device's memory is its hardware profile's (sizing/profiles.py).

Mixture-of-Experts (Qwen3-MoE: `num_experts`, `num_experts_per_tok`, `moe_intermediate_size`, `decoder_sparse_step`,
`mlp_only_layers`, as transformers' Qwen3MoeConfig and its decoder layer read them): a layer is sparse when it is
not in `mlp_only_layers` and (index + 1) % `decoder_sparse_step` == 0; its MLP is `num_experts` SwiGLU experts of
width `moe_intermediate_size` plus a router (a hidden x num_experts linear), and each token runs
`num_experts_per_tok` of them. `params` counts every expert (what memory holds), `active_params` only the
experts a token runs (what a token's FLOPs touch).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

GiB = 1024**3
MiB = 1024**2


@dataclass(frozen=True)
class ModelFacts:
    name: str
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    tie_word_embeddings: bool
    source: str = "table"  # "table" or the config.json path
    # Mixture-of-Experts (0 experts: a dense model); see the module doc
    num_experts: int = 0
    num_experts_per_tok: int = 0
    moe_intermediate_size: int = 0
    decoder_sparse_step: int = 1
    mlp_only_layers: tuple[int, ...] = ()

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0 and self.moe_layers > 0

    @property
    def moe_layers(self) -> int:
        """Decoder layers whose MLP is sparse (transformers' Qwen3MoeDecoderLayer rule)."""
        if self.num_experts <= 0:
            return 0
        step = max(1, self.decoder_sparse_step)
        return sum(1 for i in range(self.num_hidden_layers)
                   if i not in self.mlp_only_layers and (i + 1) % step == 0)

    @property
    def expert_params(self) -> int:
        """One expert's parameters (gate, up and down projections)."""
        return 3 * self.hidden_size * self.moe_intermediate_size

    @property
    def router_params(self) -> int:
        """Every router of the model (hidden x num_experts per sparse layer)."""
        return self.moe_layers * self.hidden_size * self.num_experts

    @property
    def params(self) -> int:
        """Parameter count of a Qwen3-style decoder (q/k norms, SwiGLU MLP or experts + router, RMSNorm)."""
        h, hd = self.hidden_size, self.head_dim
        attn = h * self.num_attention_heads * hd * 2 + h * self.num_key_value_heads * hd * 2 + 2 * hd
        dense_layers = self.num_hidden_layers - self.moe_layers
        mlp = dense_layers * 3 * h * self.intermediate_size
        mlp += self.moe_layers * self.num_experts * self.expert_params + self.router_params
        per_layer = attn + 2 * h
        embed = self.vocab_size * h * (1 if self.tie_word_embeddings else 2)
        return self.num_hidden_layers * per_layer + mlp + embed + h

    @property
    def active_params(self) -> int:
        """Parameters one token runs through: `params` less the experts the router does not pick."""
        idle = max(0, self.num_experts - self.num_experts_per_tok)
        return self.params - self.moe_layers * idle * self.expert_params

    @property
    def layer_params(self) -> int:
        return (self.params - self.vocab_size * self.hidden_size * (1 if self.tie_word_embeddings else 2)) // max(
            1, self.num_hidden_layers
        )


def _qwen3(name, hidden, layers, heads, inter, tie) -> ModelFacts:
    return ModelFacts(name, hidden, layers, heads, 8, 128, inter, 151936, tie)


# From the Qwen3 model cards' config.json files.
QWEN3_TABLE: dict[str, ModelFacts] = {
    "0.6b": _qwen3("Qwen3-0.6B", 1024, 28, 16, 3072, True),
    "1.7b": _qwen3("Qwen3-1.7B", 2048, 28, 16, 6144, True),
    "4b": _qwen3("Qwen3-4B", 2560, 36, 32, 9728, True),
    "8b": _qwen3("Qwen3-8B", 4096, 36, 32, 12288, False),
    "14b": _qwen3("Qwen3-14B", 5120, 40, 40, 17408, False),
    "32b": _qwen3("Qwen3-32B", 5120, 64, 64, 25600, False),
}


# Qwen3's MoE models, from the model cards' config.json (Qwen/Qwen3-30B-A3B; its -Base and -Instruct-2507 share the
# shape): 30.5B parameters, 3.3B activated (the card's figures; `params` / `active_params` reproduce them).
QWEN3_MOE_TABLE: dict[str, ModelFacts] = {
    "30b-a3b": ModelFacts("Qwen3-30B-A3B", 2048, 48, 32, 4, 128, 6144, 151936, False, num_experts=128,
                          num_experts_per_tok=8, moe_intermediate_size=768),
}


def _folder_name(folder: Path) -> str:
    """A prepared hub model's folder is named by its revision (models/hub_model.py): say `org/name@revision`."""
    from gspo_cli.models.hub_model import MANIFEST

    manifested = (folder / MANIFEST).is_file()
    return f"{folder.parent.parent.name}/{folder.parent.name}@{folder.name}" if manifested else folder.name


def _from_config(cfg_file: Path) -> ModelFacts | None:
    try:
        cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
        cfg = cfg.get("text_config", cfg)
        heads = int(cfg["num_attention_heads"])
        hidden = int(cfg["hidden_size"])
        # transformers 5 saves Qwen3-MoE's num_experts under its attribute-map name num_local_experts
        experts = int(cfg.get("num_experts") or cfg.get("num_local_experts") or 0)
        return ModelFacts(
            name=_folder_name(cfg_file.parent),
            hidden_size=hidden,
            num_hidden_layers=int(cfg["num_hidden_layers"]),
            num_attention_heads=heads,
            num_key_value_heads=int(cfg.get("num_key_value_heads") or heads),
            head_dim=int(cfg.get("head_dim") or hidden // heads),
            intermediate_size=int(cfg.get("intermediate_size") or 4 * hidden),
            vocab_size=int(cfg["vocab_size"]),
            tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
            source=str(cfg_file),
            num_experts=experts,
            num_experts_per_tok=int(cfg.get("num_experts_per_tok") or 0) if experts else 0,
            moe_intermediate_size=int(cfg.get("moe_intermediate_size") or 0) if experts else 0,
            decoder_sparse_step=int(cfg.get("decoder_sparse_step") or 1),
            mlp_only_layers=tuple(int(i) for i in cfg.get("mlp_only_layers") or ()),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


# The built-in models' vocabulary: the tiny tokenizer's word-level tokens (models/tiny.py; the built config.json's
# vocab_size, tests/engines/verl/test_builtin_facts.py)
TINY_VOCAB = 37


def builtin_facts(name: str) -> ModelFacts:
    """A built-in model's facts from its own config: its folder's config.json once built, else the shape it is
    built with (models/builtin.shape), so nothing is built to answer and nothing asks to download it (issue #33)."""
    from gspo_cli.models import builtin

    cfg = builtin.default_dir(name) / "config.json"
    if cfg.is_file():
        facts = _from_config(cfg)
        if facts is not None:
            return facts
    s = builtin.shape(name)
    return ModelFacts(name, s["hidden_size"], s["num_hidden_layers"], s["num_attention_heads"],
                      s["num_key_value_heads"], s["head_dim"], s["intermediate_size"], TINY_VOCAB, True,
                      f"builtin:{name} (its build config)", num_experts=s.get("num_experts", 0),
                      num_experts_per_tok=s.get("num_experts_per_tok", 0),
                      moe_intermediate_size=s.get("moe_intermediate_size", 0),
                      decoder_sparse_step=s.get("decoder_sparse_step", 1),
                      mlp_only_layers=tuple(s.get("mlp_only_layers", ())))


def facts_for(path: str) -> ModelFacts | None:
    """The facts of a preset's `model.path`: a built-in model's own (`builtin_facts`), else `model_facts`."""
    if path.startswith("builtin:"):
        from gspo_cli.models import builtin

        name = path[len("builtin:"):]
        if name in builtin.names():
            return builtin_facts(name)
    return model_facts(path)


def model_facts(path: str) -> ModelFacts | None:
    """Facts from `<path>/config.json` when the path is a local folder, else the Qwen3 table by name."""
    cfg_file = Path(path).expanduser() / "config.json"
    if cfg_file.is_file():
        return _from_config(cfg_file)
    moe = re.search(r"qwen3-(30b-a3b)(?![\w.])", path, re.IGNORECASE)
    if moe:
        return QWEN3_MOE_TABLE[moe.group(1).lower()]
    match = re.search(r"qwen3-(0\.6|1\.7|4|8|14|32)b(?![\w.])", path, re.IGNORECASE)
    return QWEN3_TABLE.get(f"{match.group(1)}b") if match else None
