"""What preflight and the memory model need to know about the model and the device: sizes, not weights.

`model_facts(path)` reads `<path>/config.json` when the path is a local folder, else the built-in Qwen3 table by
name. `DEVICE_PROFILES` are the memory sizes of one rank (an A3 die, a 910B card, a GPU).
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

    @property
    def params(self) -> int:
        """Parameter count of a dense Qwen3-style decoder (q/k norms, SwiGLU MLP, RMSNorm)."""
        h, hd = self.hidden_size, self.head_dim
        attn = h * self.num_attention_heads * hd * 2 + h * self.num_key_value_heads * hd * 2 + 2 * hd
        mlp = 3 * h * self.intermediate_size
        per_layer = attn + mlp + 2 * h
        embed = self.vocab_size * h * (1 if self.tie_word_embeddings else 2)
        return self.num_hidden_layers * per_layer + embed + h

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


@dataclass(frozen=True)
class DeviceProfile:
    name: str
    label: str
    memory_bytes: int


# One device = what the framework sees as one rank (an A3 die, a 910B card, a GPU).
DEVICE_PROFILES: dict[str, DeviceProfile] = {
    "a3": DeviceProfile("a3", "Atlas A3 (one die)", 64 * GiB),
    "a2-910b": DeviceProfile("a2-910b", "Atlas A2 910B", 64 * GiB),
    "h100": DeviceProfile("h100", "NVIDIA H100", 80 * GiB),
    "h200": DeviceProfile("h200", "NVIDIA H200", 141 * GiB),
}


def _from_config(cfg_file: Path) -> ModelFacts | None:
    try:
        cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
        cfg = cfg.get("text_config", cfg)
        heads = int(cfg["num_attention_heads"])
        hidden = int(cfg["hidden_size"])
        return ModelFacts(
            name=cfg_file.parent.name,
            hidden_size=hidden,
            num_hidden_layers=int(cfg["num_hidden_layers"]),
            num_attention_heads=heads,
            num_key_value_heads=int(cfg.get("num_key_value_heads") or heads),
            head_dim=int(cfg.get("head_dim") or hidden // heads),
            intermediate_size=int(cfg.get("intermediate_size") or 4 * hidden),
            vocab_size=int(cfg["vocab_size"]),
            tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
            source=str(cfg_file),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def model_facts(path: str) -> ModelFacts | None:
    """Facts from `<path>/config.json` when the path is a local folder, else the Qwen3 table by name."""
    cfg_file = Path(path).expanduser() / "config.json"
    if cfg_file.is_file():
        return _from_config(cfg_file)
    match = re.search(r"qwen3-(0\.6|1\.7|4|8|14|32)b(?![\w.])", path, re.IGNORECASE)
    return QWEN3_TABLE.get(f"{match.group(1)}b") if match else None
