"""`reward.verifier`: gspo's verifier reaches verl as a `pkg://` module, verl's own is verl's default scorer, and
the choice is refused where verl has no scorer. Both choices measured on the labelled corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import verl as _verl  # noqa: F401  (verl is a dev dependency: without it this module errors, never skips)

from gspo_cli.config import presets
from gspo_cli.engines.verl.compile import compile_preset
from gspo_cli.errors import ConfigError

CORPUS = Path(__file__).parent / "data" / "verifier_corpus.jsonl"
PATHS = dict(run_dir="/r/run", train_file="/d/t.parquet", val_file="/d/v.parquet")


def verl_reward_fn(sets):
    """What verl's reward manager will call for a preset: verl's own loader on verl's config composed from the
    compiled overrides."""
    from verl.trainer.ppo.reward import get_custom_reward_fn

    from gspo_cli.engines.verl.schema_check import compose

    compiled = compile_preset(presets.load_preset("qwen3-32b-4x16", sets), **PATHS)
    reward = [o for o in compiled.overrides if o.startswith("reward.")]
    return reward, get_custom_reward_fn(compose(compiled.overrides))


def test_verl_choice_names_no_custom_function_so_verl_uses_its_default():
    reward, fn = verl_reward_fn(["reward.verifier=verl"])
    assert reward == [] and fn is None  # verl's naive manager then calls default_compute_score(data_source, ...)


def test_gspo_choice_is_gspos_compute_score_through_verls_loader():
    from gspo_cli.rewards.score import compute_score

    reward, fn = verl_reward_fn([])
    assert reward == ["reward.custom_reward_function.path=pkg://gspo_cli.rewards.verl_entry",
                      "reward.custom_reward_function.name=compute_score"]
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines()][:60]
    for r in rows:
        got = fn(data_source=r["data_source"], solution_str=r["response"], ground_truth=r["ground_truth"])
        assert got == compute_score(r["data_source"], r["response"], r["ground_truth"])


def test_verl_choice_is_refused_for_data_verl_cannot_score():
    with pytest.raises(ConfigError) as info:
        compile_preset(presets.load_preset("qwen3-32b-4x16", ["reward.verifier=verl", "data.train.source=arith"]),
                       **PATHS)
    assert "no scorer for data source 'arith'" in info.value.message and "reward.verifier: gspo" in info.value.hint


def test_gspo_choice_agrees_with_labels_more_often_than_verls():
    from verl.utils.reward_score import default_compute_score

    from gspo_cli.rewards.score import compute_score

    rows = [json.loads(line) for line in CORPUS.read_text().splitlines()]
    rows = [r for r in rows if r["data_source"] != "arith"]
    gspo = sum(bool(compute_score(r["data_source"], r["response"], r["ground_truth"])["acc"]) == r["label"]
               for r in rows)
    verl = 0
    for r in rows:
        result = default_compute_score(r["data_source"], r["response"], r["ground_truth"])
        verl += bool(result["acc"] if isinstance(result, dict) else result > 0) == r["label"]
    print(f"corpus ({len(rows)} rows verl can score): gspo {gspo}, verl {verl}")
    assert gspo >= 0.99 * len(rows) and verl < gspo


def test_resolves_here_reports_what_a_node_cannot_import(monkeypatch):
    from gspo_cli.rewards import choice

    assert choice.resolves_here() is None
    monkeypatch.setattr(choice, "VERL_ENTRY", "pkg://gspo_cli/rewards/not_installed")
    assert choice.resolves_here() == "ModuleNotFoundError: No module named 'gspo_cli.rewards.not_installed'"
