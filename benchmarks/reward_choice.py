"""Accuracy of the two `reward.verifier` choices on gspo's labelled sets, scored as training scores them.

    .venv/bin/python benchmarks/reward_choice.py

- `gspo`: what verl calls with `reward.custom_reward_function.path=pkg://gspo_cli.rewards.verl_entry`
  (resolved here through verl's own loader, `verl.trainer.ppo.reward.get_custom_reward_fn`, from the override
  string gspo compiles).
- `verl`: what verl calls when no custom function is named: `verl.utils.reward_score.default_compute_score`
  with the row's data_source (math_dapo for DAPO-Math-17k and AIME), i.e. the upstream scripts' reward.

A row agrees when the verdict (`acc`) equals its hand label. Rows whose data_source verl has no scorer for
(gspo's synthetic `arith`) are counted apart: `reward.verifier: verl` is refused for those datasets.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SETS = {
    "labelled corpus": ROOT / "tests/rewards/data/verifier_corpus.jsonl",
    "peer-suite cases": ROOT / "tests/rewards/data/peer_suite_cases.jsonl",
    "adversarial suite": ROOT / "tests/rewards/data/adversarial_suite.jsonl",
}


def choices() -> dict:
    """verifier -> fn(data_source, response, ground_truth) -> dict, obtained the way verl obtains them."""
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.utils.reward_score import default_compute_score

    from gspo_cli.config import presets
    from gspo_cli.engines.verl.compile import compile_preset

    compiled = compile_preset(presets.load_preset("qwen3-32b-4x16"), run_dir="/r", train_file="/t", val_file="/v")
    reward = [o for o in compiled.overrides if o.startswith("reward.")]
    gspo_fn = get_custom_reward_fn(OmegaConf.from_dotlist(reward))
    return {
        "gspo": lambda src, resp, gt: gspo_fn(data_source=src, solution_str=resp, ground_truth=gt),
        "verl": lambda src, resp, gt: default_compute_score(src, resp, gt),
    }


def measure(rows: list[dict], fn) -> tuple[int, int, float]:
    agree, start = 0, time.perf_counter()
    for r in rows:
        result = fn(r.get("data_source") or "math_dapo", r["response"], r["ground_truth"])
        acc = result["acc"] if isinstance(result, dict) else result > 0
        agree += bool(acc) == bool(r["label"])
    return agree, len(rows), time.perf_counter() - start


def main() -> None:
    import logging

    logging.disable(logging.WARNING)
    fns = choices()
    print("| set | cases scored | `reward.verifier: gspo` | `reward.verifier: verl` | not scorable by verl |")
    print("|---|---:|---:|---:|---:|")
    for name, path in SETS.items():
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        scorable = [r for r in rows if (r.get("data_source") or "math_dapo") != "arith"]
        cells = []
        for choice in ("gspo", "verl"):
            agree, total, seconds = measure(scorable, fns[choice])
            cells.append(f"{100 * agree / total:.1f}% ({agree}/{total})")
        print(f"| {name} ({path.relative_to(ROOT)}) | {len(scorable)} | {cells[0]} | {cells[1]} | "
              f"{len(rows) - len(scorable)} |")


if __name__ == "__main__":
    main()
