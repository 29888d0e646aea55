"""Plain data passed between the eval stages (backends -> scoring -> metrics). No heavy imports."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Sampling:
    """Sampling settings of one eval run (also written into results.json)."""

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1  # -1 = disabled
    max_tokens: int = 1024
    seed: int = 0

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Generation:
    """One response: its text, how many tokens it used, and why it stopped ('stop' or 'length')."""

    text: str
    tokens: int
    finish_reason: str

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Generation:
        return cls(text=d["text"], tokens=int(d["tokens"]), finish_reason=str(d["finish_reason"]))
