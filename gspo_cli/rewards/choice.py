"""The reward a verl run trains with: gspo's verifier or verl's own, chosen by `reward.verifier` (the reward
backends registry, rewards/backends.py, holds the choices; this module holds what they need of verl).

- `gspo`: `gspo_cli.rewards.score.compute_score` (Answer: lines, boxed answers, prose conclusions), the function
  `gspo eval` scores with. verl loads it as `custom_reward_function.path=pkg://gspo_cli.rewards.verl_entry`:
  verl's `load_module` (verl/utils/import_utils.py) imports a `pkg://` path by module name, so it resolves on
  every node where gspo is installed, in whatever folder.
- `verl`: no custom function; verl's reward manager calls `verl.utils.reward_score.default_compute_score` with
  each row's data_source (`math_dapo` for DAPO-Math-17k, `aime2024` -> math_dapo), as the upstream scripts do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

VERL_ENTRY = "pkg://gspo_cli.rewards.verl_entry"
ENTRY_FUNCTION = "compute_score"

# data_source of each gspo dataset adapter -> whether verl's default_compute_score knows it (its dispatch in
# verl/utils/reward_score/__init__.py: "math_dapo", and any source starting with "aime", go to math_dapo;
# "openai/gsm8k" to its gsm8k rule).
VERL_KNOWS = {"dapo-math-17k": "math_dapo", "aime-2024": "aime2024", "aime-2025": "aime2025", "gsm8k": "openai/gsm8k",
              "gsm8k-test": "openai/gsm8k"}


def verl_compute_score(
    data_source: str, solution_str: str, ground_truth: Any, extra_info: dict[str, Any] | None = None
) -> dict[str, Any]:
    """verl's `default_compute_score` (what a `reward.verifier: verl` run trains with) in the batch pool's shape:
    score, acc, pred ("" where math_dapo found no answer, its "[INVALID]")."""
    from verl.utils.reward_score import default_compute_score

    res = default_compute_score(data_source, solution_str, ground_truth, extra_info)
    if not isinstance(res, dict):
        return {"score": float(res), "acc": float(res) > 0, "pred": None}
    score = float(res.get("score", 0.0))
    pred = res.get("pred")
    return {"score": score, "acc": bool(res["acc"]) if "acc" in res else score > 0,
            "pred": None if pred is None else ("" if str(pred) == "[INVALID]" else str(pred))}


def check_verl_sources(preset: Preset) -> None:
    """verl's default scorer (`reward.verifier: verl`) needs data sources verl can score; refuse the others with
    the alternative."""
    from gspo_cli.errors import ConfigError

    for spec in (preset.data.train, preset.data.val):
        if spec.source not in VERL_KNOWS:
            raise ConfigError(f"reward.verifier verl: verl's default_compute_score has no scorer for data source "
                              f"{spec.source!r} (it knows {', '.join(VERL_KNOWS)})",
                              "set reward.verifier: gspo for this dataset")


def resolves_here() -> str | None:
    """None when this Python imports what `pkg://gspo_cli.rewards.verl_entry` names (verl's `load_module` does
    `importlib.import_module` of the dotted name, then `getattr(module, "compute_score")`); else why not.
    Cheap (no verl import): `gspo cluster smoke` runs it on every node."""
    import importlib

    try:
        module = importlib.import_module(VERL_ENTRY[len("pkg://"):].replace("/", "."))
        getattr(module, ENTRY_FUNCTION)
    except Exception as exc:  # noqa: BLE001 - reported per node
        return f"{type(exc).__name__}: {exc}"
    return None


def probe_with_verl(overrides: list[str]) -> dict[str, Any]:
    """Resolve reward overrides the way verl's reward workers do (`verl.trainer.ppo.reward.get_custom_reward_fn`)
    in this process and score one right and one wrong answer; errors are reported, not raised. Run as a Ray task
    pinned to a node, it shows whether that node's Python can load the reward a job will name."""
    import os
    import sys

    from omegaconf import OmegaConf

    out: dict[str, Any] = {"pid": os.getpid(), "python": sys.executable, "cwd": os.getcwd()}
    try:
        from verl.trainer.ppo.reward import get_custom_reward_fn

        fn = get_custom_reward_fn(OmegaConf.from_dotlist(list(overrides)))
        if fn is None:
            out["error"] = "no reward.custom_reward_function.path in the overrides"
            return out
        out["right"] = fn(data_source="math_dapo", solution_str="<think>6*7</think> The answer is 42.",
                          ground_truth="42")
        out["wrong"] = fn(data_source="math_dapo", solution_str="Answer: 41", ground_truth="42")
        out["module_file"] = sys.modules["gspo_cli.rewards.verl_entry"].__file__
    except Exception as exc:  # noqa: BLE001 - the caller reports it per node
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out
