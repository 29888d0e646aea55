"""Preflight: the arithmetic and memory checks that verl would otherwise fail on minutes into a cluster job.

Engine-independent. `gather(preset)` reads the model's `config.json` (local path) or the built-in Qwen3 table and
the prepared-data manifest; `evaluate(preset, facts, data)` is pure and returns a `Report` of checks (error /
warn / ok / info) and estimates. Errors block launch; warnings are shown.

Memory figures are estimates (documented in `estimate_memory`), meant to catch a config that cannot fit, not
to replace a profiler.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

GiB = 1024**3
MiB = 1024**2


# ---------------------------------------------------------------- facts


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


def model_facts(path: str) -> ModelFacts | None:
    """Facts from `<path>/config.json` when the path is a local folder, else the Qwen3 table by name."""
    local = Path(path).expanduser()
    cfg_file = local / "config.json"
    if cfg_file.is_file():
        try:
            cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
            cfg = cfg.get("text_config", cfg)
            heads = int(cfg["num_attention_heads"])
            hidden = int(cfg["hidden_size"])
            return ModelFacts(
                name=local.name,
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
    match = re.search(r"qwen3-(0\.6|1\.7|4|8|14|32)b(?![\w.])", path, re.IGNORECASE)
    return QWEN3_TABLE.get(f"{match.group(1)}b") if match else None


@dataclass
class DataFacts:
    train_rows: int | None = None
    val_rows: int | None = None
    error: str | None = None  # why the rows are unknown (not prepared, stale manifest, ...)
    fix: str | None = None


def data_facts(preset) -> DataFacts:
    """Rows of the prepared train/val splits from their manifests; the prepare-data check when available."""
    from gspo_cli import layout
    from gspo_cli.errors import GspoError

    facts = DataFacts()
    try:
        from gspo_cli.data.manifest import check_prepared
    except ImportError:  # prepare-data not installed in this tree
        check_prepared = None
    if check_prepared is not None:
        try:
            check_prepared(preset)
        except GspoError as exc:
            facts.error, facts.fix = exc.message, exc.hint
    for split, spec in (("train", preset.data.train), ("val", preset.data.val)):
        mpath = layout.manifest_path(spec.source, preset)
        try:
            manifest = json.loads(mpath.read_text(encoding="utf-8"))
            rows = manifest["outputs"][split]["rows"]
        except (OSError, ValueError, KeyError, TypeError):
            rows = None
            if facts.error is None:
                facts.error = f"dataset {spec.source} is not prepared ({mpath} missing or has no {split} split)"
                facts.fix = f"run: gspo prepare-data --preset {preset.name}"
        setattr(facts, f"{split}_rows", rows)
    return facts


def gather(preset) -> tuple[ModelFacts | None, DataFacts]:
    return model_facts(preset.model.path), data_facts(preset)


# ---------------------------------------------------------------- report


@dataclass
class Check:
    name: str
    status: str  # error | warn | ok | info
    message: str
    keys: list[str] = field(default_factory=list)
    fix: str | None = None


@dataclass
class Report:
    checks: list[Check]
    estimates: dict[str, Any]

    @property
    def errors(self) -> list[Check]:
        return [c for c in self.checks if c.status == "error"]

    @property
    def warnings(self) -> list[Check]:
        return [c for c in self.checks if c.status == "warn"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [asdict(c) for c in self.checks], "estimates": self.estimates}


def _gb(n: float) -> str:
    return f"{n / GiB:.1f} GiB"


def estimate_memory(preset, m: ModelFacts, device_bytes: int | None) -> dict[str, Any]:
    """Per-device memory of the FSDP actor and the vLLM rollout (bytes).

    Actor (verl FSDP, fp32 master weights `fsdp_config.model_dtype=fp32`, sharded over the whole world):
    params 4 B/param, grads 4 B/param, AdamW 8 B/param, each / world; param_offload moves params and grads to
    host memory, optimizer_offload the AdamW states. Plus the transient bf16 all-gather of one layer (two with
    forward prefetch), checkpointed activations (hidden x 2 B per token per layer with gradient checkpointing,
    ~16x that without) and the fp32 logits of one micro-batch (chunked entropy: a 2048-token chunk).
    Rollout (vLLM): bf16 weights / TP, then the KV cache gets `gpu_memory_utilization x device - weights - 1 GiB`
    (activations and graphs); a token costs 2 (K,V) x layers x kv_heads/TP x head_dim x 2 B.
    """
    a, r, d = preset.actor, preset.rollout, preset.data
    world = preset.cluster.world_size
    params = m.params
    sp = a.ulysses_sequence_parallel_size
    seq = d.max_prompt_length + d.max_response_length
    if a.use_dynamic_bsz and a.ppo_max_token_len_per_device:
        tokens = a.ppo_max_token_len_per_device
    else:  # a fixed micro-batch of full-length sequences, split over the SP group
        tokens = (a.ppo_micro_batch_size_per_device or 1) * -(-seq // sp)
    shard = params / world
    resident = {
        "params_fp32": 0 if a.param_offload else 4 * shard,
        "grads_fp32": 0 if a.param_offload else 4 * shard,
        "optimizer_adamw": 0 if a.optimizer_offload else 8 * shard,
    }
    gathered = 2 * m.layer_params * (2 if a.forward_prefetch else 1)
    act_per_token_layer = m.hidden_size * 2 * (1 if preset.model.enable_gradient_checkpointing else 16)
    activations = tokens * act_per_token_layer * m.num_hidden_layers
    logits_tokens = min(tokens, 2048) if a.entropy_from_logits_with_chunking else tokens
    logits = logits_tokens * m.vocab_size * 4
    actor_total = sum(resident.values()) + gathered + activations + logits
    offloaded_host_per_device = (4 * shard + 4 * shard if a.param_offload else 0) + (
        8 * shard if a.optimizer_offload else 0
    )
    tp = r.tensor_parallel_size
    weights_tp = 2 * params / tp
    kv_heads_rank = max(1, m.num_key_value_heads // tp)
    kv_token = 2 * m.num_hidden_layers * kv_heads_rank * m.head_dim * 2
    out: dict[str, Any] = {
        "params": params,
        "actor_bytes": {k: int(v) for k, v in resident.items()}
        | {"gathered_layers_bf16": int(gathered), "activations": int(activations), "logits_fp32": int(logits)},
        "actor_total_bytes": int(actor_total),
        "host_offload_bytes_per_node": int(offloaded_host_per_device * preset.cluster.devices_per_node),
        "rollout_weights_bytes": int(weights_tp),
        "kv_bytes_per_token": int(kv_token),
        "device_bytes": device_bytes,
    }
    if device_bytes:
        budget = r.gpu_memory_utilization * device_bytes
        kv_bytes = budget - weights_tp - 1 * GiB
        out["kv_cache_bytes"] = int(max(0, kv_bytes))
        out["kv_cache_tokens"] = int(max(0, kv_bytes) // kv_token)
        out["full_length_seqs"] = int(max(0, kv_bytes) // kv_token // seq)
    return out


def evaluate(preset, model: ModelFacts | None, data: DataFacts | None) -> Report:
    """Every check, pure. `model`/`data` None skip the checks that need them (with a warning saying so)."""
    checks: list[Check] = []

    def add(name, ok, message, keys=(), *, fix=None, level="error"):
        checks.append(Check(name, "ok" if ok else level, message, list(keys), None if ok else fix))

    c, a, r, d = preset.cluster, preset.actor, preset.rollout, preset.data
    world = c.world_size
    tp, sp, n = r.tensor_parallel_size, a.ulysses_sequence_parallel_size, r.n
    seq = d.max_prompt_length + d.max_response_length
    dp = world // sp if sp and world % sp == 0 else None
    vllm = r.name == "vllm"

    if preset.trainer.engine == "verl" and c.device == "cpu":
        checks.append(Check("device", "error", "trainer.engine verl needs NPUs or GPUs; cluster.device is cpu",
                            ["cluster.device", "trainer.engine"],
                            "set cluster.device: npu|cuda|auto, or use trainer.engine: native on a CPU"))
    checks.append(Check("world size", "info", f"{c.nnodes} nodes x {c.devices_per_node} devices = {world}",
                        ["cluster.nnodes", "cluster.devices_per_node"]))
    if vllm:
        add("world % rollout TP", world % tp == 0, f"world {world} {'is' if world % tp == 0 else 'is not'} divisible "
            f"by rollout.tensor_parallel_size {tp}", ["rollout.tensor_parallel_size", "cluster.devices_per_node"],
            fix=f"pick a TP that divides {world}")
    add("world % SP", world % sp == 0, f"world {world} {'is' if world % sp == 0 else 'is not'} divisible by "
        f"actor.ulysses_sequence_parallel_size {sp}", ["actor.ulysses_sequence_parallel_size"],
        fix=f"pick an SP that divides {world}")

    if model is None:
        checks.append(Check("model facts", "warn", f"no config.json at {preset.model.path!r} and not a known Qwen3 "
                            "size: head, vocabulary and memory checks skipped", ["model.path"],
                            "download the model to a local folder and point model.path at it"))
    else:
        checks.append(Check("model", "info", f"{model.name}: {model.params / 1e9:.2f}B params, {model.num_hidden_layers}"
                            f" layers, {model.num_attention_heads} heads / {model.num_key_value_heads} KV heads, "
                            f"hidden {model.hidden_size}, vocab {model.vocab_size} (from {model.source})",
                            ["model.path"]))
        if vllm:
            kv_ok = model.num_key_value_heads % tp == 0
            add("TP | KV heads", kv_ok, f"rollout TP {tp} {'divides' if kv_ok else 'does not divide'} "
                f"{model.num_key_value_heads} KV heads", ["rollout.tensor_parallel_size"],
                fix=f"use a TP that divides {model.num_key_value_heads}")
            h_ok = model.num_attention_heads % tp == 0
            add("TP | attention heads", h_ok, f"rollout TP {tp} {'divides' if h_ok else 'does not divide'} "
                f"{model.num_attention_heads} attention heads", ["rollout.tensor_parallel_size"],
                fix=f"use a TP that divides {model.num_attention_heads}")
        s_ok = model.num_attention_heads % sp == 0
        add("SP | attention heads", s_ok, f"Ulysses SP {sp} {'divides' if s_ok else 'does not divide'} "
            f"{model.num_attention_heads} attention heads", ["actor.ulysses_sequence_parallel_size"],
            fix=f"use an SP that divides {model.num_attention_heads}")

    traj = d.train_batch_size * n
    if preset.trainer.engine == "verl":
        # verl's validate_config (FSDP): train_batch_size x n % n_gpus (the whole world, not DP), because the
        # batch is balanced and dispatched in world-size chunks.
        add("batch x n % world", traj % world == 0, f"train_batch_size x n = {d.train_batch_size} x {n} = {traj} "
            f"{'is' if traj % world == 0 else 'is not'} divisible by the world size {world}",
            ["data.train_batch_size", "rollout.n", "cluster.nnodes", "cluster.devices_per_node"],
            fix=f"make train_batch_size x n a multiple of {world}")
    if dp is not None:
        add("batch x n % DP", traj % dp == 0, f"train_batch_size x n = {d.train_batch_size} x {n} = {traj} "
            f"{'is' if traj % dp == 0 else 'is not'} divisible by the DP size {dp} (= world {world} / SP {sp})",
            ["data.train_batch_size", "rollout.n"], fix=f"make train_batch_size x n a multiple of {dp}")
        mini_traj = a.ppo_mini_batch_size * n
        add("mini-batch x n % DP", mini_traj % dp == 0, f"ppo_mini_batch_size x n = {mini_traj} "
            f"{'is' if mini_traj % dp == 0 else 'is not'} divisible by the DP size {dp}",
            ["actor.ppo_mini_batch_size", "rollout.n"], fix=f"make ppo_mini_batch_size x n a multiple of {dp}")
    mini_traj = a.ppo_mini_batch_size * n
    add("batch x n % mini-batch x n", traj % mini_traj == 0, f"{traj} trajectories per step "
        f"{'split' if traj % mini_traj == 0 else 'do not split'} into mini-batches of {mini_traj}",
        ["data.train_batch_size", "actor.ppo_mini_batch_size"], fix="make train_batch_size a multiple of the mini-batch")
    add("mini-batch <= batch", a.ppo_mini_batch_size <= d.train_batch_size,
        f"ppo_mini_batch_size {a.ppo_mini_batch_size} {'<=' if a.ppo_mini_batch_size <= d.train_batch_size else '>'} "
        f"train_batch_size {d.train_batch_size}", ["actor.ppo_mini_batch_size"], fix="lower ppo_mini_batch_size")
    if vllm:
        bt_ok = r.enable_chunked_prefill or r.max_num_batched_tokens >= seq
        add("batched tokens >= prompt+response", bt_ok, f"max_num_batched_tokens {r.max_num_batched_tokens} vs "
            f"prompt+response {seq}" + (" (chunked prefill on)" if r.enable_chunked_prefill else ""),
            ["rollout.max_num_batched_tokens", "rollout.enable_chunked_prefill"],
            fix=f"raise max_num_batched_tokens to >= {seq} or enable chunked prefill")
        if model is not None:
            need = model.vocab_size * model.hidden_size * 4
            have = r.update_weights_bucket_megabytes * MiB
            add("weight-sync bucket >= fp32 embedding", have >= need,
                f"update_weights_bucket_megabytes {r.update_weights_bucket_megabytes} MB vs embedding "
                f"{model.vocab_size} x {model.hidden_size} x 4 B = {need / MiB:.0f} MB",
                ["rollout.update_weights_bucket_megabytes"],
                fix=f"set rollout.update_weights_bucket_megabytes >= {-(-need // MiB)}")
    if a.use_dynamic_bsz:
        need_tok = -(-seq // sp)
        have_tok = a.ppo_max_token_len_per_device
        tok_ok = have_tok is not None and have_tok >= need_tok
        add("max tokens per device >= (prompt+response)/SP", tok_ok,
            f"ppo_max_token_len_per_device {have_tok} vs ({d.max_prompt_length}+{d.max_response_length})/{sp} = "
            f"{need_tok}", ["actor.ppo_max_token_len_per_device"],
            fix=f"set actor.ppo_max_token_len_per_device >= {need_tok}")
    elif a.ppo_micro_batch_size_per_device is None:
        add("micro-batch size", False, "use_dynamic_bsz is off and ppo_micro_batch_size_per_device is unset",
            ["actor.use_dynamic_bsz", "actor.ppo_micro_batch_size_per_device"],
            fix="set actor.use_dynamic_bsz: true or actor.ppo_micro_batch_size_per_device")

    optim_steps = (d.train_batch_size // a.ppo_mini_batch_size) * a.ppo_epochs
    checks.append(Check("per training step", "info", f"{traj} trajectories ({d.train_batch_size} prompts x n {n}), "
                        f"{optim_steps} optimizer steps ({d.train_batch_size // a.ppo_mini_batch_size} mini-batches x "
                        f"{a.ppo_epochs} epochs)", ["data.train_batch_size", "rollout.n", "actor.ppo_mini_batch_size"]))
    estimates: dict[str, Any] = {"world_size": world, "dp_size": dp, "trajectories_per_step": traj,
                                 "optimizer_steps_per_step": optim_steps}
    if data is not None:
        if data.train_rows is not None:
            spe = data.train_rows // d.train_batch_size
            total = preset.trainer.total_training_steps or spe * preset.trainer.total_epochs
            estimates.update(steps_per_epoch=spe, total_steps=total, train_rows=data.train_rows)
            add("steps per epoch", spe >= 1, f"{data.train_rows} train rows / batch {d.train_batch_size} = {spe} steps "
                f"per epoch, {total} steps in total ({preset.trainer.total_epochs} epochs)",
                ["data.train_batch_size", "trainer.total_epochs"], fix="use a smaller train_batch_size or more data")
            if spe >= 1:
                checks[-1].status = "info"
        if data.error:
            checks.append(Check("prepared data", "error", data.error, ["data.train", "data.val"], data.fix))
        else:
            checks.append(Check("prepared data", "ok", f"train {data.train_rows} rows, val {data.val_rows} rows "
                                "(manifest matches the preset)", ["data.train", "data.val"]))

    profile = DEVICE_PROFILES.get((c.profile or "").lower())
    if model is not None:
        mem = estimate_memory(preset, model, profile.memory_bytes if profile else None)
        estimates["memory"] = mem
        actor = mem["actor_total_bytes"]
        if profile is None:
            checks.append(Check("device memory", "warn", f"cluster.profile {c.profile!r} is not one of "
                                f"{', '.join(DEVICE_PROFILES)}: memory checked only as estimates",
                                ["cluster.profile"], "set cluster.profile"))
            checks.append(Check("actor memory", "info", f"~{_gb(actor)} per device", ["actor.param_offload"]))
        else:
            dev = profile.memory_bytes
            level = "ok" if actor <= 0.9 * dev else ("warn" if actor <= dev else "error")
            checks.append(Check("actor memory", level, f"~{_gb(actor)} per device of {_gb(dev)} ({profile.label}): "
                                f"params {_gb(mem['actor_bytes']['params_fp32'])}, grads "
                                f"{_gb(mem['actor_bytes']['grads_fp32'])}, AdamW "
                                f"{_gb(mem['actor_bytes']['optimizer_adamw'])}, gathered layers "
                                f"{_gb(mem['actor_bytes']['gathered_layers_bf16'])}, activations "
                                f"{_gb(mem['actor_bytes']['activations'])}, logits {_gb(mem['actor_bytes']['logits_fp32'])}"
                                + (f"; {_gb(mem['host_offload_bytes_per_node'])} host memory per node for offload"
                                   if mem["host_offload_bytes_per_node"] else ""),
                                ["actor.param_offload", "actor.optimizer_offload", "cluster.nnodes"],
                                None if level == "ok" else "enable actor.param_offload / optimizer_offload, raise SP, "
                                "or use more devices"))
            if vllm:
                budget = r.gpu_memory_utilization * dev
                w = mem["rollout_weights_bytes"]
                seqs = mem["full_length_seqs"]
                if w + GiB >= budget:
                    checks.append(Check("rollout memory", "error", f"weights / TP {tp} = {_gb(w)} do not fit in "
                                        f"gpu_memory_utilization {r.gpu_memory_utilization} x {_gb(dev)} = "
                                        f"{_gb(budget)}", ["rollout.tensor_parallel_size",
                                                           "rollout.gpu_memory_utilization"],
                                        "raise rollout.tensor_parallel_size or gpu_memory_utilization"))
                else:
                    level = "ok" if seqs >= 1 else "error"
                    replicas = world // tp if world % tp == 0 else None
                    per_replica = -(-traj // replicas) if replicas else None
                    msg = (f"weights / TP {tp} = {_gb(w)}; KV cache {_gb(mem['kv_cache_bytes'])} at "
                           f"utilisation {r.gpu_memory_utilization} = {mem['kv_cache_tokens']:,} tokens = {seqs} "
                           f"concurrent full-length ({seq}-token) sequences per replica")
                    if per_replica:
                        msg += f"; {per_replica} sequences per replica per step ({replicas} replicas)"
                    checks.append(Check("rollout memory", level, msg, ["rollout.gpu_memory_utilization",
                                                                        "rollout.tensor_parallel_size"],
                                        None if level == "ok" else "raise gpu_memory_utilization or TP"))
                    if level == "ok" and r.max_num_seqs and seqs < r.max_num_seqs and per_replica and \
                            per_replica > seqs:
                        checks.append(Check("rollout concurrency", "warn", f"only {seqs} full-length sequences fit "
                                            f"but max_num_seqs is {r.max_num_seqs}: vLLM will preempt long ones",
                                            ["rollout.max_num_seqs"]))
    return Report(checks, estimates)


def run(preset) -> Report:
    model, data = gather(preset)
    return evaluate(preset, model, data)
