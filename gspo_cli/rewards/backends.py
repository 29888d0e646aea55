"""The reward backends: every way gspo scores a response, in one registry (the pattern of gspo_cli/registry.py).

- `reward.verifier` picks one (`verifier=True`): a run trains with it (verl's job names it through
  `custom_reward_function`, or leaves verl's default scorer), `gspo eval` scores with it (its batch-pool scorer),
  `gspo score` reports with it;
- `gspo score --compare` takes the peers (`peer=True`).

Each backend is one decorated row scorer (`gspo score`'s view of a response); what else it needs is said on the
decorator. The batch pool (rewards/batch.py) scores in fresh worker processes, so a backend names its pool scorer
by import path (`pool_scorer`, "module:function"; None: gspo's own data-source registry in the worker).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gspo_cli.errors import ConfigError
from gspo_cli.registry import Registry
from gspo_cli.rewards import choice

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset


@dataclass(frozen=True)
class Row:
    line: int  # 1-based line (JSONL) or row (parquet) number, for error messages and the table
    response: str
    ground_truth: str
    data_source: str


@dataclass(frozen=True)
class Result:
    acc: bool
    pred: str | None  # None: this verifier does not say what it extracted
    how: str = ""
    error: str | None = None


@dataclass(frozen=True)
class RewardBackend:
    name: str
    about: str
    score_row: Callable[[Row], Result]
    verifier: bool = False  # a `reward.verifier` choice
    peer: bool = False  # a `gspo score --compare` peer
    needs: tuple[tuple[str, str], ...] = ()  # (module, what needs it): checked before any row is scored
    pool_scorer: str | None = None  # the batch pool's scorer, by import path (None: gspo's data-source registry)
    verl_reward: tuple[str, str] | None = None  # verl's custom_reward_function (path, name); None: verl's default
    check_preset: Callable[[Preset], None] | None = None  # refuses a preset whose data it cannot score

    def check(self, preset: Preset) -> None:
        if self.check_preset is not None:
            self.check_preset(preset)

    def require(self) -> None:
        """A ConfigError naming the first package this backend needs that is not installed."""
        for module, what in self.needs:
            if importlib.util.find_spec(module) is None:
                raise ConfigError(f"{what} needs the `{module}` package, which is not installed",
                                  f"pip install {module}")


REWARD_BACKENDS: Registry[RewardBackend] = Registry("verifier", key="reward.verifier")


def reward_backend(name: str, about: str, **options: Any) -> Callable[[Callable[[Row], Result]],
                                                                         Callable[[Row], Result]]:
    """Register the decorated row scorer as reward backend `name` (options: the RewardBackend fields)."""
    return REWARD_BACKENDS.register_as(name, lambda fn: RewardBackend(name, about, fn, **options))


@reward_backend("gspo", "gspo's verifier (Answer: lines, boxed answers, prose conclusions; docs/verifier.md)",
                verifier=True, verl_reward=(choice.VERL_ENTRY, choice.ENTRY_FUNCTION))
def _gspo(row: Row) -> Result:
    from gspo_cli.rewards.score import explain

    v = explain(row.data_source, row.response, row.ground_truth)
    return Result(v.acc, v.pred, v.how)


@reward_backend("verl", "verl's default_compute_score, by each row's data_source (upstream's reward)",
                verifier=True, peer=True, needs=(("verl", "the verl verifier"),),
                pool_scorer="gspo_cli.rewards.choice:verl_compute_score", check_preset=choice.check_verl_sources)
def _verl(row: Row) -> Result:
    try:
        res = choice.verl_compute_score(row.data_source, row.response, row.ground_truth)
    except Exception as e:  # noqa: BLE001 - e.g. NotImplementedError for a data_source verl does not know
        return Result(False, None, "error", f"{type(e).__name__}: {' '.join(str(e).split())}"[:200])
    return Result(res["acc"], res["pred"])


def math_verify_acc(response: str, ground_truth: str) -> bool:
    """The body of verl.utils.reward_score.math_verify (gold boxed and parsed as LaTeX, the response parsed as
    expression or LaTeX), run on the calling thread so that its signal timeouts work: call it from a main thread."""
    from verl.utils.reward_score.math_verify import _verify_in_subprocess

    try:
        return _verify_in_subprocess("\\boxed{" + ground_truth + "}", response) > 0
    except Exception as e:  # noqa: BLE001 - verl's compute_score scores any exception 0; reported once
        from gspo_cli.rewards.fallback import no_match

        return no_match(e)


@reward_backend("math-verify", "the response parsed by math-verify as verl's math_verify scorer does", peer=True,
                needs=(("verl", "--compare math-verify (verl's math_verify scorer)"),
                       ("math_verify", "--compare math-verify")))
def _math_verify(row: Row) -> Result:
    import logging

    logging.getLogger("math_verify").setLevel(logging.ERROR)
    return Result(math_verify_acc(row.response, row.ground_truth), None)


def scorer_for(preset: Preset | None) -> str | None:
    """The scorer `gspo eval` passes to the batch pool for this preset (None without a preset: gspo's): eval scores
    with the preset's choice, so an eval's accuracy is what training rewarded."""
    return REWARD_BACKENDS.lookup(preset.reward.verifier).pool_scorer if preset is not None else None


def verifiers() -> tuple[str, ...]:
    return tuple(n for n, b in REWARD_BACKENDS.items() if b.verifier)


def peers() -> tuple[str, ...]:
    return tuple(n for n, b in REWARD_BACKENDS.items() if b.peer)
