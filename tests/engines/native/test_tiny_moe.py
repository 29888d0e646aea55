"""The built-in tiny MoE (`builtin:tiny-moe`), the routing hooks (models/moe.py) and the native engine's routing
probe (engines/native/routing_probe.py) on it."""

from __future__ import annotations

import hashlib
import json
import subprocess

import pytest
import torch
from native_helpers import PY, ROOT, quick_preset

from gspo_cli.engines.native.trainer import NativeTrainer, train
from gspo_cli.jobs import events
from gspo_cli.metrics.jsonl import read_metrics
from gspo_cli.models import moe, tiny_moe

MOE_KEYS = ("moe/routing_flip_frac", "moe/routing_flip_frac_max", "moe/routing_changed_frac",
            "moe/routing_token_changed_frac",
            "moe/routing_flip_frac_update", "moe/routing_flip_frac_random", "moe/logprob_gap",
            "moe/logprob_gap_replay", "moe/router_gap_share", "moe/seq_logratio_gap", "moe/load_cv",
            "moe/load_cv_max", "rollout/moe/max_vio/max", "rollout/moe/max_vio/avg", "rollout/moe/min_vio/avg",
            "rollout/moe/avg_vio/avg")


@pytest.fixture(scope="module")
def moe_path(gspo_home) -> str:
    from gspo_cli.models.loading import resolve_model_path

    return resolve_model_path("builtin:tiny-moe")


@pytest.fixture
def model(moe_path):
    from gspo_cli.models.loading import load_model

    torch.manual_seed(0)
    return load_model(moe_path)


def _digest(folder) -> dict[str, str]:
    names = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]
    return {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in names}


def test_built_offline_the_same_in_a_fresh_process_with_the_qwen3_moe_shape(moe_path, gspo_home, tmp_path):
    other = tmp_path / "moe"
    code = f"from gspo_cli.models.tiny_moe import ensure_tiny_moe_model; ensure_tiny_moe_model({str(other)!r})"
    subprocess.run([PY, "-c", code], cwd=ROOT, check=True, capture_output=True, timeout=300)
    assert _digest(other) == _digest(tiny_moe.default_dir())
    assert moe_path == str(tiny_moe.default_dir()) and tiny_moe.default_dir().name.startswith("tiny-moe-v1-")
    config = json.loads((tiny_moe.default_dir() / "config.json").read_text())
    assert config["architectures"] == ["Qwen3MoeForCausalLM"] and config["model_type"] == "qwen3_moe"
    # transformers 5 writes num_experts under its attribute-map name num_local_experts
    experts = config.get("num_experts", config.get("num_local_experts"))
    assert (experts, config["num_experts_per_tok"], config["moe_intermediate_size"]) == (8, 2, 64)
    assert config["head_dim"] == 32  # vLLM-CPU's lowest head size
    # the tokenizer is the tiny models' one: the same vocabulary and chat template
    tok = json.loads((tiny_moe.default_dir() / "tokenizer.json").read_text())
    from gspo_cli.models import tiny

    dense = json.loads((tiny.default_dir() / "tokenizer.json").read_text())
    assert tok["model"]["vocab"] == dense["model"]["vocab"]


def test_a_changed_moe_shape_gets_a_new_cache_folder(gspo_home, monkeypatch):
    before = tiny_moe.default_dir()
    monkeypatch.setitem(tiny_moe.MOE_SHAPE, "num_experts_per_tok", 1)
    assert tiny_moe.default_dir() != before


def test_unknown_builtin_names_every_builtin_model():
    from gspo_cli.errors import ConfigError
    from gspo_cli.models.loading import builtin_name

    assert builtin_name("builtin:tiny-moe") == "tiny-moe"
    with pytest.raises(ConfigError) as err:
        builtin_name("builtin:nope")
    assert "builtin:tiny-moe" in err.value.hint and "builtin:tiny" in err.value.hint


def test_capture_sees_the_routers_own_top_k(model):
    """Oracle: transformers' own router logits (output_router_logits) -> softmax -> top-k."""
    ids = torch.randint(0, 37, (3, 7))
    with moe.capture(model) as rec:
        out = model(input_ids=ids, output_router_logits=True)
    (calls,) = [rec.calls()]
    assert len(calls) == 1 and calls[0].shape == (21, 2, 2)
    for layer, logits in enumerate(out.router_logits):
        expected = torch.softmax(logits.float(), -1).topk(2, dim=-1).indices
        assert torch.equal(calls[0][:, layer].sort(-1).values, expected.sort(-1).values)
    assert moe.moe_shape(model) == (2, 8, 2)


def test_replaying_the_own_routes_changes_nothing_and_other_routes_do(model):
    ids = torch.randint(0, 37, (2, 6))
    with moe.capture(model) as rec:
        free = model(input_ids=ids).logits
    routes = rec.calls()[0]
    with moe.replay(model, [routes]):
        same = model(input_ids=ids).logits
    assert torch.equal(free, same)  # bit for bit: the gate weights are the router's own
    shifted = (routes + 1) % 8  # control: other experts
    with moe.replay(model, [shifted]):
        other = model(input_ids=ids).logits
    assert not torch.allclose(free, other)
    with pytest.raises(RuntimeError, match="positions"), moe.replay(model, [routes[:3]]):
        model(input_ids=ids)
    with pytest.raises(ValueError, match="MoE layers"), moe.replay(model, [routes[:, :1]]):
        pass


def test_dense_model_has_no_routers(gspo_home):
    from gspo_cli.engines.native.routing_probe import RoutingProbe
    from gspo_cli.models.loading import load_model, resolve_model_path

    dense = load_model(resolve_model_path("builtin:tiny"))
    assert not moe.is_moe(dense) and RoutingProbe.for_model(dense, 1.0) is None


def _moe_trainer(workspace, name: str, extra: list[str] | None = None) -> NativeTrainer:
    preset = quick_preset(workspace["sets"], ["model.path=builtin:tiny-moe", *(extra or [])])
    return NativeTrainer(preset, workspace["runs"] / name)


def test_probe_shared_prompt_layout_equals_one_full_forward_per_row(workspace):
    """The probe runs each prompt once and fans its cache out; its routes and log-probs equal a plain forward over
    each whole sequence."""
    from gspo_cli.engines.native.rollout import generate, response_log_probs

    trainer = _moe_trainer(workspace, "layout")
    probe = trainer.routing
    assert probe is not None
    torch.manual_seed(1)
    batch = generate(trainer.model, trainer.tokenizer, trainer.train_rows[:3], trainer.sampling, trainer.device, n=4)
    rows = torch.arange(len(batch))
    logp, routes = probe._forward(batch, rows)
    P, R = batch.prompt_len, batch.responses.shape[1]
    assert routes.shape == (12, P + R - 1, 2, 2)
    with torch.no_grad(), moe.capture(trainer.model) as rec:
        full_logp, _ = response_log_probs(trainer.model, batch, trainer.sampling.temperature, share_prompts=False)
    full = rec.calls()[0].view(12, P + R, 2, 2)[:, :P + R - 1]
    real = batch.attention_mask[:, :P + R - 1].bool()  # left padding of the prompts is not a decision
    assert torch.equal(routes.sort(-1).values[real], full.sort(-1).values[real])
    mask = batch.response_mask.bool()
    assert torch.allclose(logp[mask], full_logp[mask], atol=1e-5)


def test_probe_without_a_weight_change_measures_no_flip_and_no_gap(workspace):
    from gspo_cli.engines.native.rollout import generate

    trainer = _moe_trainer(workspace, "still")
    probe = trainer.routing
    torch.manual_seed(2)
    batch = generate(trainer.model, trainer.tokenizer, trainer.train_rows[:4], trainer.sampling, trainer.device, n=4)
    probe.start_step(batch)
    for first in (0, 8):  # two "updates" that change nothing
        rows = torch.arange(first, first + 8)
        probe.before_update(rows)
        probe.after_update(rows)
    m = probe.metrics()
    assert m["moe/routing_flip_frac"] == 0.0 and m["moe/routing_flip_frac_update"] == 0.0
    assert m["moe/logprob_gap"] < 1e-5 and m["moe/routing_flip_frac_random"] == 0.75
    assert 0.0 <= m["moe/load_cv"] <= m["moe/load_cv_max"]
    # control: a moved router flips routes (the same probe, the router's rows permuted before the second update)
    probe.start_step(batch)
    probe.before_update(torch.arange(0, 8))
    with torch.no_grad():
        for r in moe.routers(trainer.model):
            r.weight.copy_(r.weight.roll(1, dims=0))
    probe.after_update(torch.arange(0, 8))
    probe.before_update(torch.arange(8, 16))
    m = probe.metrics()
    assert m["moe/routing_flip_frac_update"] > 0.2 and m["moe/routing_flip_frac"] > 0.2
    assert m["moe/logprob_gap"] > 0 and "moe/router_gap_share" in m


def test_trainer_logs_routing_metrics_for_an_moe_policy_only(workspace):
    events_seen: list[dict] = []
    previous = events.set_sink(events_seen.append)
    try:
        preset = quick_preset(workspace["sets"], ["model.path=builtin:tiny-moe", "trainer.routing_metrics_freq=2",
                                                  "trainer.val_before_train=false"])
        assert train(preset, workspace["runs"] / "moe") == 0
        dense = quick_preset(workspace["sets"], ["trainer.total_training_steps=2", "trainer.val_before_train=false"])
        assert train(dense, workspace["runs"] / "dense") == 0
    finally:
        events.set_sink(previous)
    records = {r["step"]: r["data"] for r in read_metrics(workspace["runs"] / "moe" / "metrics.jsonl")}
    assert [s for s, d in sorted(records.items()) if "moe/load_cv" in d] == [2, 4]  # every 2nd step
    for key in MOE_KEYS:
        assert key in records[4], key
    assert 0.0 <= records[4]["moe/routing_flip_frac"] <= 1.0 and records[4]["timing_s/routing_probe"] > 0
    assert records[4]["timing_s/update_actor"] > 0  # the probe's passes are taken out of the update's time
    dense_keys = {k for r in read_metrics(workspace["runs"] / "dense" / "metrics.jsonl") for k in r["data"]}
    assert not {k for k in dense_keys if "moe/" in k or k == "timing_s/routing_probe"}
