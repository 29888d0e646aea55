"""The native training loop end to end on the tiny preset: metrics, validation, checkpoints, determinism, resume."""

from __future__ import annotations

from pathlib import Path

import pytest
from native_helpers import quick_preset

from gspo_cli.engines.native.trainer import train
from gspo_cli.jobs import events
from gspo_cli.layout import list_steps
from gspo_cli.metrics.jsonl import read_metrics

# Out of `make test-fast`: these tests run real training, CLI subprocesses or verl's config compose (5-60 s each).
pytestmark = pytest.mark.slow

VOLATILE = ("timing_s/", "perf/")  # wall-clock dependent


def _run(preset, run_dir: Path) -> list[dict]:
    seen: list[dict] = []
    previous = events.set_sink(seen.append)
    try:
        assert train(preset, run_dir) == 0
    finally:
        events.set_sink(previous)
    return seen


def _curve(run_dir: Path) -> list[tuple[int, dict]]:
    return [(r["step"], {k: v for k, v in r["data"].items() if not k.startswith(VOLATILE)})
            for r in read_metrics(run_dir / "metrics.jsonl")]


def test_a_short_run_writes_verl_metrics_checkpoints_and_progress(workspace):
    preset = quick_preset(workspace["sets"])
    run = workspace["runs"] / "a"
    seen = _run(preset, run)
    records = read_metrics(run / "metrics.jsonl")
    assert [r["step"] for r in records] == [0, 1, 2, 3, 4]  # 0: validation before training (verl's step 0)
    assert set(records[0]["data"]) == {"val-core/arith/acc/mean@1", "val-aux/arith/reward/mean@1"}
    records = records[1:]
    for name in ("critic/score/mean", "critic/acc/mean", "critic/advantages/mean", "actor/pg_loss",
                 "actor/pg_clipfrac", "actor/ppo_kl", "actor/grad_norm", "actor/entropy", "actor/lr",
                 "response_length/mean", "response_length/clip_ratio", "timing_s/gen", "timing_s/update_actor",
                 "timing_s/step", "perf/throughput", "training/global_step"):
        assert name in records[0]["data"], name
    # validation every test_freq=2 steps, with verl's key
    assert [("val-core/arith/acc/mean@1" in r["data"]) for r in records] == [False, True, False, True]
    assert 0.0 <= records[1]["data"]["val-core/arith/acc/mean@1"] <= 1.0
    # advantages are summarised over response tokens, as verl does (test_data_metrics_match_verls_...): the
    # token-weighted mean of group-centred advantages lies inside the range, not necessarily at 0
    adv = {k: records[0]["data"][f"critic/advantages/{k}"] for k in ("min", "mean", "max")}
    assert adv["min"] <= adv["mean"] <= adv["max"] and adv["min"] < 0 < adv["max"]
    # warmup: verl's constant-with-warmup starts at lr 0 and reaches the peak after lr_warmup_steps
    lrs = [r["data"]["actor/lr"] for r in records]
    assert lrs[0] == 0.0 and lrs[-1] == preset.actor.lr
    assert list_steps(run) == [2, 4]  # max_ckpt_to_keep=2, save_freq=2
    progress = [e for e in seen if e["kind"] == "progress"]
    assert [e["step"] for e in progress] == [1, 2, 3, 4] and progress[-1]["total"] == 4
    result = [e for e in seen if e["kind"] == "result"][-1]["payload"]
    assert result["final_step"] == 4 and Path(result["metrics"]) == run / "metrics.jsonl"


def test_same_seed_same_curve_other_seed_other_curve(workspace):
    a, b, c = (workspace["runs"] / x for x in "abc")
    _run(quick_preset(workspace["sets"]), a)
    _run(quick_preset(workspace["sets"]), b)
    _run(quick_preset(workspace["sets"], ["trainer.seed=2"]), c)
    assert _curve(a) == _curve(b)
    assert _curve(a) != _curve(c)


def test_resume_continues_exactly_where_the_checkpoint_left_off(workspace):
    full, part = workspace["runs"] / "full", workspace["runs"] / "part"
    _run(quick_preset(workspace["sets"]), full)
    _run(quick_preset(workspace["sets"], ["trainer.total_training_steps=2"]), part)
    seen = _run(quick_preset(workspace["sets"]), part)  # same run folder: resume_mode auto
    assert any(e["kind"] == "message" and "resumed from" in e["text"] and "step 2" in e["text"] for e in seen)
    assert [e["step"] for e in seen if e["kind"] == "progress"] == [3, 4]
    assert _curve(part) == _curve(full)


def test_finished_run_is_not_trained_again(workspace):
    run = workspace["runs"] / "done"
    _run(quick_preset(workspace["sets"]), run)
    before = (run / "metrics.jsonl").read_text()
    seen = _run(quick_preset(workspace["sets"]), run)
    assert not [e for e in seen if e["kind"] == "progress"]
    assert (run / "metrics.jsonl").read_text() == before


def test_resume_disabled_refuses_a_used_run_folder(workspace):
    from gspo_cli.errors import ConfigError

    run = workspace["runs"] / "used"
    _run(quick_preset(workspace["sets"], ["trainer.total_training_steps=2"]), run)
    (run / "metrics.jsonl").unlink()  # checkpoints alone are enough to refuse
    before = sorted(p.name for p in (run / "checkpoints").iterdir())
    with pytest.raises(ConfigError, match="resume_mode is disable"):
        _run(quick_preset(workspace["sets"], ["trainer.resume_mode=disable"]), run)
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == before
    fresh = workspace["runs"] / "fresh"
    _run(quick_preset(workspace["sets"], ["trainer.resume_mode=disable", "trainer.total_training_steps=2"]), fresh)
    assert list_steps(fresh) == [2]


def test_metrics_of_a_run_killed_before_its_first_checkpoint_are_redone(workspace):
    run = workspace["runs"] / "early"
    run.mkdir(parents=True)
    (run / "metrics.jsonl").write_text('{"step": 0, "data": {}}\n{"step": 1, "data": {}}\n{"step": 2, "da')
    _run(quick_preset(workspace["sets"]), run)
    assert [r["step"] for r in read_metrics(run / "metrics.jsonl")] == [0, 1, 2, 3, 4]


def test_overlong_penalty_is_added_to_the_score_not_to_acc():
    from types import SimpleNamespace

    import torch

    from gspo_cli.config.presets import load_preset
    from gspo_cli.engines.native.scoring import score_responses

    cfg = load_preset("tiny").algorithm.overlong_penalty  # buffer 1, factor 1.0, max length 3
    rows = [{"data_source": "arith", "reward_model": {"ground_truth": "7"}}]
    batch = SimpleNamespace(texts=["7", "7 ", "7  ", "8"], row_index=[0, 0, 0, 0],
                            response_mask=torch.tensor([[1, 1, 0], [1, 1, 1], [1, 1, 1], [1, 1, 0]]))
    scores, accs = score_responses(rows, batch, cfg, 3)
    assert scores.tolist() == [1.0, 0.0, 0.0, -1.0] and accs.tolist() == [1.0, 1.0, 1.0, 0.0]
    off = load_preset("tiny", ["algorithm.overlong_penalty.enable=false"]).algorithm.overlong_penalty
    assert score_responses(rows, batch, off, 3)[0].tolist() == [1.0, 1.0, 1.0, -1.0]


def test_single_pass_old_log_probs_equal_a_separate_pass(workspace):
    """On one on-policy pass the update's own detached log-probs serve as old log-probs: same update as verl's
    separate no-grad recompute."""
    import warnings

    import torch

    from gspo_cli.algo.advantages import broadcast_to_tokens, grpo_outcome_advantages
    from gspo_cli.engines.native.rollout import generate, response_log_probs
    from gspo_cli.engines.native.scoring import score_responses
    from gspo_cli.engines.native.trainer import NativeTrainer

    preset = quick_preset(workspace["sets"], ["actor.ppo_mini_batch_size=4"])  # one mini-batch of the 4 prompts
    params = []
    for separate in (False, True):
        trainer = NativeTrainer(preset, workspace["runs"] / f"sp{separate}")
        assert trainer.single_pass(16)
        torch.manual_seed(5)
        rows = trainer.train_rows[:4]
        batch = generate(trainer.model, trainer.tokenizer, rows, trainer.sampling, trainer.device)
        scores, _ = score_responses(rows, batch, preset.algorithm.overlong_penalty, trainer.sampling.max_tokens)
        adv = broadcast_to_tokens(grpo_outcome_advantages(scores, batch.row_index), batch.response_mask)
        with warnings.catch_warnings():  # "scheduler stepped before optimizer": deliberate here
            warnings.simplefilter("ignore")
            trainer.scheduler.step()  # past the lr=0 warmup step, so the update is not a no-op
        before = [p.detach().clone() for p in trainer.model.parameters()]
        old = None
        if separate:
            with torch.no_grad():
                old, _ = response_log_probs(trainer.model, batch, trainer.sampling.temperature)
        metrics = trainer.update_policy(batch, old, adv)
        params.append((metrics, [p.detach().clone() for p in trainer.model.parameters()]))
        assert not all(torch.equal(a, b) for a, b in zip(before, params[-1][1], strict=True))
    (m_fused, p_fused), (m_sep, p_sep) = params
    assert m_fused == m_sep
    assert all(torch.equal(a, b) for a, b in zip(p_fused, p_sep, strict=True))


def test_device_choice():
    import pytest
    import torch

    from gspo_cli.errors import ConfigError
    from gspo_cli.models.device import resolve_device

    assert resolve_device("cpu") == torch.device("cpu")
    if not torch.cuda.is_available():
        assert resolve_device("auto") == torch.device("cpu")  # no torch_npu in dev installs, no CUDA here
        with pytest.raises(ConfigError):
            resolve_device("cuda")
    with pytest.raises(ConfigError):
        resolve_device("npu")  # torch-npu is never installed in dev/CI


def test_data_metrics_match_verls_compute_data_metrics(gspo_home):
    """Batch metrics carry verl's names, so they must mean what verl's do: verl's own function is the oracle."""
    import torch
    from verl import DataProto
    from verl.trainer.ppo.metric_utils import compute_data_metrics

    from gspo_cli.algo.advantages import broadcast_to_tokens, grpo_outcome_advantages
    from gspo_cli.engines.native.rollout import Sampling, generate
    from gspo_cli.engines.native.trainer import data_metrics
    from gspo_cli.models.loading import load_model, load_tokenizer, resolve_model_path

    path = resolve_model_path("builtin:tiny")
    model, tok = load_model(path), load_tokenizer(path)
    rows = [{"prompt": [{"role": "user", "content": c}]} for c in ["1+1=", "12+7=", "3*4=", "5+5+5="]]
    max_len = 3
    torch.manual_seed(3)
    batch = generate(model, tok, rows, Sampling(max_tokens=max_len), torch.device("cpu"), n=4)
    resp_len = batch.response_mask.sum(-1)
    # the cases that tell the definitions apart: clipped and not, responses of different lengths
    assert resp_len.eq(max_len).any() and resp_len.lt(max_len).any() and batch.responses.shape[1] == max_len
    scores = torch.tensor([float(i % 3) - 1.0 for i in range(len(batch))])
    token_adv = broadcast_to_tokens(grpo_outcome_advantages(scores, batch.row_index), batch.response_mask)
    token_scores = torch.zeros_like(batch.response_mask)
    token_scores[torch.arange(len(batch)), resp_len.long() - 1] = scores  # verl puts the score on the last token
    proto = DataProto.from_dict(tensors={
        "token_level_scores": token_scores, "token_level_rewards": token_scores, "advantages": token_adv,
        "returns": token_adv, "responses": batch.responses, "prompts": batch.input_ids[:, :batch.prompt_len],
        "attention_mask": batch.attention_mask, "response_mask": batch.response_mask})
    expected = compute_data_metrics(proto, use_critic=False)
    ours = data_metrics(batch, scores, token_adv, max_len)
    assert set(ours) <= set(expected)
    for key, value in ours.items():
        assert value == pytest.approx(expected[key], abs=1e-6), key
    # token-weighted, as verl: differs from the per-sequence mean (0 within each group) on this batch
    assert abs(ours["critic/advantages/mean"]) > 1e-3
