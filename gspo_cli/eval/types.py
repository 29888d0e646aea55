"""Plain data passed between the eval stages (backends -> scoring -> metrics). No heavy imports."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from gspo_cli.models.generate import Sampling  # noqa: F401  (re-exported: eval passes it to its backends)


@dataclass(frozen=True)
class Generation:
    """One response: its text, how many tokens it used, why it stopped ('stop' or 'length'), and the token ids
    (the eos included, as `tokens` counts it; kept in memory only, so backends can be compared token by token)."""

    text: str
    tokens: int
    finish_reason: str
    token_ids: tuple[int, ...] = ()

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Generation:
        return cls(text=d["text"], tokens=int(d["tokens"]), finish_reason=str(d["finish_reason"]),
                   token_ids=tuple(int(t) for t in d.get("token_ids") or ()))
