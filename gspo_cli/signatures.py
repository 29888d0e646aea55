"""The failure-signature catalog: the ways verl + vLLM-Ascend runs really fail, as data.

Each `Signature` says how gspo recognises one failure (detection), what it tells the user (message), how to fix
it, where the report came from (sources: issue threads, verl source lines) and which function detects it
(`detector`, "module:function"). The detectors live where they run:
  preflight  gspo_cli/engines/verl/traps.py      (`gspo train --dry-run`, `gspo train`, `gspo presets show`)
  doctor     gspo_cli/env/known_bad.py, checks.py (`gspo env doctor`)
  run        gspo_cli/metrics/health.py (rules over metrics.jsonl) and gspo_cli/jobs/failures.py (the job wrapper's
             classifier of a finished attempt)
A check or message that comes from a signature names its id, so `gspo env doctor --explain ID` finds the rest.
docs/failures.md is generated from this module (docs/gen_failures.py; tests/test_signatures.py keeps it equal).
No imports beyond the standard library: `gspo --help` may load this.
"""

from __future__ import annotations

from dataclasses import dataclass

STAGES = ("preflight", "doctor", "run")
VERL = "https://github.com/verl-project/verl"
VLLM_ASCEND = "https://github.com/vllm-project/vllm-ascend"
VERL_091 = f"{VERL}/blob/v0.9.1"


@dataclass(frozen=True)
class Signature:
    id: str
    stage: str  # preflight | doctor | run
    title: str
    detection: str  # what gspo looks at
    message: str  # what the user is told (the cause)
    fix: str
    sources: tuple[str, ...]
    detector: str  # "module:function" that detects it
    action: str = ""  # run stage: what the wrapper does (restart / stop / warn)


CATALOG: tuple[Signature, ...] = (
    # ------------------------------------------------------------ preflight: configuration traps
    Signature(
        "gspo-token-mean", "preflight", "GSPO loss aggregated with token-mean",
        "algorithm.loss_mode gspo/gspo_token and the loss_agg_mode verl will use (algorithm.loss_agg_mode, or an "
        "overrides.verl entry for actor_rollout_ref.actor.loss_agg_mode) is token-mean without the preset setting "
        "algorithm.loss_agg_mode: token-mean itself",
        "verl 0.9.1's GSPO loss aggregates with actor.loss_agg_mode, whose default is token-mean (0.9.0 hard-coded "
        "seq-mean-token-mean): a GSPO run that leaves it to verl trains a token-weighted objective, not the "
        "paper's per-sequence mean",
        "set algorithm.loss_agg_mode: seq-mean-token-mean (the paper; every built-in GSPO preset does), or write "
        "algorithm.loss_agg_mode: token-mean in the preset if that objective is intended",
        (f"{VERL_091}/verl/trainer/ppo/core_algos.py (compute_policy_loss_gspo: agg_loss(loss_agg_mode=...))",
         f"{VERL_091}/verl/trainer/config/actor/actor.yaml (loss_agg_mode: token-mean)",
         f"{VERL}/issues/957"),
        "gspo_cli.engines.verl.traps:loss_agg_checks"),
    Signature(
        "gspo-bypass-mode", "preflight", "rollout-correction bypass mode replaces the GSPO loss or drops the correction",
        "algorithm.rollout_correction.bypass_mode true (the preset's section or overrides.verl) with loss_mode "
        "gspo/gspo_token: with trainer.use_v1=false (verl's legacy trainer), or with rollout_is / rollout_rs set",
        "verl's legacy trainer (ray_trainer.py) calls apply_bypass_mode, which sets policy_loss.loss_mode to "
        "bypass_mode (token-level PPO-clip or REINFORCE on rollout log-probs): the GSPO loss is silently not used. "
        "verl's V1 trainer (gspo's default) keeps the GSPO loss in bypass mode but skips the correction step "
        "(trainer/ppo/v1/trainer_base.py _compute_advantage): rollout_is, rollout_rs and loss_type are silently ignored",
        "keep verl's V1 trainer (no trainer.use_v1=false); for importance weights or rejection use decoupled mode "
        "(bypass_mode: false, rollout.calculate_log_probs: true, rollout_is: sequence); to monitor the train/rollout "
        "gap keep rollout.calculate_log_probs: true",
        (f"{VERL_091}/verl/trainer/ppo/rollout_corr_helper.py (apply_bypass_mode)",
         f"{VERL_091}/verl/trainer/ppo/ray_trainer.py (fit: apply_bypass_mode)",
         f"{VERL_091}/verl/trainer/ppo/v1/trainer_base.py (_compute_old_log_prob, _compute_advantage)",
         f"{VERL}/pull/3694"),
        "gspo_cli.engines.verl.traps:rollout_correction_checks"),
    Signature(
        "gspo-ppo-clip", "preflight", "GRPO-style clip ratios under the GSPO loss",
        "loss_mode gspo/gspo_token with clip_ratio_low or clip_ratio_high above 0.01",
        "GSPO clips a length-normalised sequence ratio, which stays within ~1e-3 of 1: the paper's range is "
        "3e-4 / 4e-4, about 1000x tighter than GRPO's 0.2 / 0.28; with PPO-style ratios nothing is ever clipped "
        "and the trust region is gone",
        "use clip_ratio_low: 3.0e-4, clip_ratio_high: 4.0e-4 (GSPO paper, Sec. 5.1), or loss_mode: vanilla for "
        "PPO-style clipping",
        ("https://github.com/huggingface/trl/issues/3834", f"{VERL}/pull/2775"),
        "gspo_cli.engines.verl.traps:clip_checks"),
    Signature(
        "verl-inert-key", "preflight", "a key verl 0.9.1 accepts but never reads on this path",
        "compiled overrides that verl 0.9.1 does not read here: actor.grad_clip (the FSDP engine reads "
        "actor.optim.clip_grad), actor.clip_ratio_c under the GSPO loss, ref.* without a reference policy, "
        "actor_rollout_ref.nccl_timeout, actor.entropy_checkpointing with entropy_coeff 0; warned when set to a "
        "value other than the live key's",
        "the value is accepted by verl's schema and then ignored: the setting you changed is not the one in effect",
        "change the live key the dry-run names instead (for gspo presets: the preset key that compiles to it)",
        (f"{VERL_091}/verl/workers/config/optimizer.py (clip_grad; grad_clip deprecated)",
         f"{VERL_091}/verl/trainer/ppo/core_algos.py (clip_ratio_c: compute_policy_loss_vanilla only)",
         f"{VERL_091}/verl/workers/config/critic.py (the only reader of nccl_timeout)"),
        "gspo_cli.engines.verl.traps:inert_checks"),
    # vLLM-Ascend traps of verl's colocated rollout (gspo_cli/engines/verl/ascend_traps.py; docs/ascend.md
    # "Known MoE traps" lists the leads that gave no check and why)
    Signature(
        "ascend-nz-wake-up", "preflight", "FRACTAL_NZ weight format with a sleeping vLLM-Ascend rollout",
        "cluster.device npu, rollout.name vllm, verl's rollout.free_cache_engine on (its default), and the NZ mode "
        "vLLM-Ascend will read not 0: overrides.verl additional_config.weight_nz_mode, else env.vars."
        "VLLM_ASCEND_ENABLE_NZ; preset env.vllm_ascend 0.11.0 or later (or unknown)",
        "vllm-ascend's NPUWorker.wake_up raises ValueError (\"FRACTAL_NZ mode is enabled. This may cause model "
        "parameter precision issues in the RL scenarios\") whenever NZ is on, in every release from v0.11.0 to "
        "v0.23.0 and on main, and VLLM_ASCEND_ENABLE_NZ defaults to 1; verl 0.9.1 sets it to 0 in its vLLM "
        "workers only when the variable is unset, so a preset (or node) that sets it fails at the first sync",
        "set env.vars.VLLM_ASCEND_ENABLE_NZ: \"0\" (ROLL's NPU CI does the same) and drop "
        "additional_config.weight_nz_mode",
        (f"{VLLM_ASCEND}/blob/v0.23.0/vllm_ascend/worker/worker.py (NPUWorker.wake_up)",
         f"{VLLM_ASCEND}/blob/v0.23.0/vllm_ascend/envs.py (VLLM_ASCEND_ENABLE_NZ default 1)",
         f"{VLLM_ASCEND}/pull/4023", f"{VLLM_ASCEND}/issues/13706 (RL config RFC: weight_nz_mode must be 0)",
         f"{VERL_091}/verl/workers/rollout/vllm_rollout/utils.py "
         "(VLLM_ASCEND_REQUIRED_ENV_VARS)", "https://github.com/alibaba/ROLL/blob/main/.github/workflows/"
         "ci-npu-test.yml (VLLM_ASCEND_ENABLE_NZ: \"0\")"),
        "gspo_cli.engines.verl.ascend_traps:nz_checks"),
    Signature(
        "ascend-moe-graph-reload", "preflight", "ACL graphs replaying MoE expert weights a weight sync moved",
        "cluster.device npu, an MoE model, rollout.enforce_eager false (ACL graphs) and verl's sleeping rollout",
        "verl 0.9.1 calls process_weights_after_loading after every weight sync; vllm-ascend's unquantized MoE "
        "method writes w13/w2 into new contiguous storage there (v0.13.0-v0.23.0, and main as read), while a "
        "captured ACL graph replays the device addresses it captured. vllm-ascend fixed the same mechanism for "
        "other layers by reusing the buffers (#13902 for w8a8_mxfp8, #7473 for MLA/SFA); RFC #16322 (open) still "
        "lists the MoE path. Read in the source, not measured on NPUs: verl's A3 MoE GSPO nightly runs graph mode",
        "rollout.enforce_eager: true rules it out (the issue reports #6580, #11548 and vime#157 all ran eager); "
        "with graphs keep rollout.calculate_log_probs: true so the `mismatch` health rule sees a stale rollout",
        (f"{VLLM_ASCEND}/blob/v0.23.0/vllm_ascend/ops/fused_moe/fused_moe.py (process_weights_after_loading)",
         f"{VLLM_ASCEND}/pull/13902", f"{VLLM_ASCEND}/pull/7473", f"{VLLM_ASCEND}/issues/16322",
         f"{VLLM_ASCEND}/issues/13706 (RL config RFC: the graph is captured once, addresses must stay stable)",
         "https://github.com/vllm-project/vime/issues/157",
         f"{VERL_091}/verl/workers/rollout/vllm_rollout/utils.py (update_weights_from_ipc)"),
        "gspo_cli.engines.verl.ascend_traps:graph_checks"),
    Signature(
        "ascend-ep-sleep-level2", "preflight", "expert parallelism with a level-2 sleeping vLLM-Ascend rollout",
        "cluster.device npu, an MoE model, rollout.expert_parallel_size > 1, and an installed verl outside the "
        "range gspo read (0.9.x sleeps vLLM-Ascend at level 1 on NPU; that is an info line)",
        "after a level-2 sleep discards the weights and verl reloads them, vllm-ascend's all-to-all dispatcher "
        "keeps expert_ids_per_ep_rank from before: wrong expert routing, fluent but incorrect rollouts (verl PR "
        "#7086, open); verl 0.9.1 avoids it by sleeping at level 1 on NPU (verl PR #6170)",
        "use verl 0.9.x, or rollout.expert_parallel_size: 1",
        (f"{VERL}/pull/7086", f"{VERL}/pull/6170",
         f"{VERL_091}/verl/workers/rollout/vllm_rollout/vllm_async_server.py (_resolve_sleep_level)"),
        "gspo_cli.engines.verl.ascend_traps:sleep_level_checks"),
    # ------------------------------------------------------------ doctor: environment
    Signature(
        "stack-known-bad", "doctor", "a torch / torch_npu / vllm / vllm-ascend / transformers / numpy combination "
        "known to break",
        "installed versions matched against gspo_cli/env/known_bad.py (one row per reported combination)",
        "the row's cause (e.g. vllm 0.11.0 pulls torch 2.8.0 while vllm-ascend 0.11.0 and its torch_npu need "
        "torch 2.7.1; verl 0.9.1 needs numpy>=2 and transformers>=5.5.3,<5.11)",
        "the row's fix (install vllm first, then vllm-ascend, so torch matches torch_npu; pin numpy / "
        "transformers inside verl's range)",
        (f"{VLLM_ASCEND}/issues/5710", f"{VERL}/issues/5123", f"{VERL}/issues/4027", f"{VLLM_ASCEND}/pull/476",
         "verl 0.9.1 METADATA (Requires-Dist)"),
        "gspo_cli.env.known_bad:known_bad_checks"),
    Signature(
        "npu-stale-process", "doctor", "processes of an earlier run still hold NPUs",
        "the process section of `npu-smi info` lists processes on devices before a run starts",
        "an earlier training or vLLM process still owns the device; HCCL then fails to initialise (\"Failed to "
        "initialize the HCCP process. Reason: Maybe the last training process is running\") or the run OOMs",
        "stop the listed PIDs (kill PID ...; wait 10 s as CANN advises), or `ray stop` on that node, then rerun "
        "`gspo env doctor`",
        (f"{VERL}/pull/332", f"{VERL}/issues/3947"),
        "gspo_cli.env.checks:stale_process_check"),
    Signature(
        "a3-dies-vs-cards", "doctor", "A3 devices counted as cards",
        "an Atlas A3 node (two dies per card in `npu-smi info`) whose die count is twice the preset's "
        "cluster.devices_per_node",
        "on A3 one card holds two dies and each die is one device to torch_npu, Ray and verl: \"16 NPUs per "
        "node\" means 8 cards x 2 dies; a preset that counts cards uses half the node",
        "set cluster.devices_per_node to the die count (16 on an 8-card A3 node); on A2 it is the card count",
        ("real `npu-smi info` of an A3 node: /work/shared/fixtures/ascend/npu_smi_info_a3_ascend910_25.3.rc1.txt "
         "(NPU 0-7, Chip 0-1 each: 16 devices)", "tests/env/fixtures (A2: one Chip row per NPU)"),
        "gspo_cli.env.checks:npu_fit_checks"),
    # ------------------------------------------------------------ run: health rules and failure classes
    Signature(
        "run-mismatch-growing", "run", "train/rollout log-prob gap growing",
        "training/rollout_probs_diff_mean above trainer.health.mismatch.factor (2) x its early baseline (median "
        "of the first steps), or _max above max_factor (5) x its own",
        "the rollout engine's log-probs drift away from the trainer's for the same tokens; reports tie a growing "
        "gap to a later collapse (reward and entropy fall)",
        "look at the rollout/trainer numerics first (dtype, vLLM graph mode, kernels); lower the lr; consider "
        "verl's rollout correction (algorithm.rollout_correction: rollout_is: sequence, decoupled, not bypass mode)",
        (f"{VERL}/pull/3694", f"{VERL_091}/verl/utils/debug/metrics.py (training/rollout_probs_diff_*)",
         "https://github.com/vllm-project/vime/issues/64", "https://github.com/allenai/open-instruct/issues/1473"),
        "gspo_cli.metrics.health:mismatch", action="warn"),
    Signature(
        "run-moe-routing-volatile", "run", "MoE routing moves faster than the clip can see",
        "moe/routing_flip_frac (native engine, MoE policy: the share of the experts the rollout policy chose that "
        "the policy being trained no longer chooses) above trainer.health.routing_volatility.max_flip (0.3)",
        "the experts a token is routed to change between the rollout policy and the policy being trained, so "
        "token-level importance ratios compare two different sub-networks; GRPO-style token clipping on "
        "Qwen3-30B-A3B needed routing replay, GSPO's sequence ratio did not (about 0.10 of the experts flip per "
        "update there)",
        "lower actor.lr or the mini-batches per step; keep algorithm.loss_mode gspo (sequence-level) on MoE models; "
        "with token-level clipping use routing replay (verl: Megatron or VeOmni engine, router_replay.mode R2/R3)",
        ("https://arxiv.org/abs/2507.18071 (GSPO, sec. 5.3: ~10% of activated experts change per update, "
         "Qwen3-30B-A3B)", f"{VERL}/blob/main/examples/router_replay/README.md",
         "https://github.com/NVIDIA/Megatron-LM/issues/4168"),
        "gspo_cli.metrics.health:routing_volatility", action="warn"),
    Signature(
        "run-rollout-long-tail", "run", "generation dominates the step",
        "timing_s/gen above trainer.health.gen_share.max_share of timing_s/step (vLLM rollout, trainer.mode sync)",
        "the rollout (and its long tail of long responses) takes most of each step: the training devices idle",
        "run `gspo plan --preset P` for the layout; levers: trainer.mode colocate_async, rollout.max_num_seqs, rollout.tensor_parallel_size, "
        "rollout.gpu_memory_utilization (KV cache), cudagraph mode, data.max_response_length",
        (f"{VERL}/issues/6747",),
        "gspo_cli.metrics.health:gen_share", action="warn"),
    Signature(
        "run-resume-no-step", "run", "a run that ends with exit code 0 having run no new step",
        "the training process exits 0, wrote no new step this attempt, and the run has fewer steps than "
        "trainer.total_training_steps",
        "verl resumed at an epoch boundary and its dataloader yielded nothing (the saved state marks the epoch "
        "as exhausted), or the epochs ran out before total_training_steps: the job looks finished but trained "
        "nothing",
        "check `gspo runs show RUN` for the last step; verl 0.9.1's PPO trainer has the fix of #5725, so on it "
        "raise trainer.total_epochs (the epochs ran out); on older verl resume from the previous checkpoint",
        (f"{VERL}/issues/7401", f"{VERL}/pull/7974", f"{VERL}/pull/5725", f"{VERL}/issues/5013"),
        "gspo_cli.jobs.failures:silent_exit", action="fail"),
    Signature(
        "run-hccl-stale-process", "run", "HCCL init fails: the last training process is still running",
        "EJ0001 \"Failed to initialize the HCCP process. Reason: Maybe the last training process is running\"",
        "a process of an earlier run still holds the NPU, so HCCL cannot open its communicator",
        "`gspo env doctor` lists the PIDs holding NPUs; stop them, wait 10 s, rerun",
        (f"{VERL}/pull/332",),
        "gspo_cli.jobs.failures:classify", action="stop"),
    Signature(
        "run-hccl-init", "run", "HCCL communicator init error (hcclCommInitRootInfoConfig)",
        "\"HCCL function error: hcclCommInitRootInfoConfig(...), error code is N\" before the first step",
        "the ranks could not build the HCCL communicator (multi-node: device NICs, HCCL_IF_IP / "
        "HCCL_SOCKET_IFNAME, a stale process on a device, mismatched CANN across nodes); it repeats on restart",
        "run `gspo env doctor --cluster` (device NIC links, CANN versions, stale processes); check "
        "HCCL_SOCKET_IFNAME / HCCL_IF_IP point at the interface the nodes reach each other on",
        (f"{VERL}/issues/3947", f"{VERL}/pull/332", f"{VLLM_ASCEND}/issues/3196"),
        "gspo_cli.jobs.failures:classify", action="stop"),
    Signature(
        "run-hccl-timeout", "run", "HCCL collective timed out mid-run",
        "EI0006 \"Getting socket times out\" / HcclAllreduce error during a run",
        "a rank stopped answering inside a collective (a slow or dead peer); the job can continue from its last "
        "checkpoint",
        "restarted from the last checkpoint automatically; if it repeats, raise HCCL_EXEC_TIMEOUT / "
        "HCCL_CONNECT_TIMEOUT and look for the rank that failed first",
        (f"{VLLM_ASCEND}/issues/486",),
        "gspo_cli.jobs.failures:classify", action="restart"),
    Signature(
        "run-npu-oom-sleep", "run", "NPU out of memory with vLLM-Ascend sleep mode",
        "\"NPU out of memory\" in a log that also shows vLLM's wake_up (or a traceback frame in sleep)",
        "vLLM-Ascend's sleep mode did not give back the rollout's memory before the actor phase (or it grows "
        "each sleep/wake cycle), so the next phase runs out of NPU memory; it repeats on restart",
        "lower rollout.gpu_memory_utilization; set PYTORCH_NPU_ALLOC_CONF=expandable_segments:False (sleep mode "
        "does not work with virtual memory); use a vllm-ascend release with the sleep-mode memory fixes",
        (f"{VLLM_ASCEND}/issues/977", f"{VLLM_ASCEND}/issues/9563", "https://github.com/modelscope/ms-swift/issues/6636"),
        "gspo_cli.jobs.failures:classify", action="stop"),
    Signature(
        "run-nz-wake-up", "run", "vLLM-Ascend refused to wake with the FRACTAL_NZ weight format",
        "\"FRACTAL_NZ mode is enabled\" (the ValueError vllm-ascend's NPUWorker.wake_up raises) in the log",
        "the rollout woke for a weight sync with VLLM_ASCEND_ENABLE_NZ (or additional_config.weight_nz_mode) not "
        "0; every later sync repeats it",
        "set env.vars.VLLM_ASCEND_ENABLE_NZ: \"0\" and unset it on the nodes (preflight `ascend-nz-wake-up` "
        "catches the preset's own setting)",
        (f"{VLLM_ASCEND}/blob/v0.23.0/vllm_ascend/worker/worker.py (NPUWorker.wake_up)", f"{VLLM_ASCEND}/pull/4023"),
        "gspo_cli.jobs.failures:classify", action="stop"),
    Signature(
        "run-ray-actor-died", "run", "a Ray actor died",
        "ActorDiedError / \"The actor died unexpectedly\" / RayActorError / ActorUnavailableError (its node is "
        "unreachable) in the driver's log",
        "a worker process (trainer rank or rollout server) was lost: a crash, a node loss, or the host's OOM "
        "killer; the job can continue from its last checkpoint unless the host ran out of memory",
        "restarted from the last checkpoint; if the log says the memory monitor or OOM killer killed it, lower "
        "host memory use (actor offload, fewer dataloader workers) - that is stopped, not retried",
        (f"{VERL}/issues/1633", f"{VERL}/issues/275", "https://docs.ray.io/en/latest/ray-core/fault_tolerance/actors.html"),
        "gspo_cli.jobs.failures:classify", action="restart"),
    Signature(
        "run-cluster-short", "run", "the cluster lost the device slots the job needs",
        "before each attempt and every 10 s while one runs, the job wrapper counts the alive nodes that hold "
        "cluster.devices_per_node slots of the Ray resource verl places on (NPU; GPU for GPUs and CPU devices); "
        "fewer than cluster.nnodes twice in a row",
        "a node was lost (or never joined): verl's trainer waits on the lost node's TransferQueue storage unit "
        "(200 s per request) and its vLLM servers, and a restarted verl either fails its own count (`Total "
        "available GPUs 2 is less than total desired GPUs 3`) or waits forever in `ray.get(pg.ready())` for a "
        "placement group that cannot form while the head has not yet declared the node dead",
        "no restart (it cannot be placed): the job ends with exit code 75 naming the lost node and the slots left; "
        "rejoin the node (`gspo cluster join HEAD --preset ...` on it) or lower cluster.nnodes, then "
        "`gspo train --resume RUN` continues from the last complete checkpoint; on a cluster that never had the "
        "slots, start every node with its devices (`gspo cluster up/join --preset ...`) or lower cluster.nnodes / "
        "cluster.devices_per_node (trainer.restart.capacity_check: false leaves the count to verl)",
        (f"{VERL_091}/verl/single_controller/ray/base.py", "https://docs.ray.io/en/latest/ray-core/scheduling/"
         "placement-group.html", "https://docs.ray.io/en/latest/ray-core/fault_tolerance/nodes.html"),
        "gspo_cli.jobs.capacity:shortfall", action="fail"),
)

BY_ID = {s.id: s for s in CATALOG}


def get(sig_id: str) -> Signature:
    """The signature with this id; a ConfigError naming the ids when there is none."""
    if sig_id in BY_ID:
        return BY_ID[sig_id]
    from gspo_cli.errors import ConfigError

    raise ConfigError(f"no failure signature {sig_id!r}", f"one of: {', '.join(BY_ID)} (docs/failures.md)")


def counts() -> dict[str, int]:
    return {stage: sum(s.stage == stage for s in CATALOG) for stage in STAGES}


def explain(sig: Signature) -> str:
    """The plain-text card `gspo env doctor --explain ID` prints."""
    lines = [f"{sig.id} ({sig.stage}): {sig.title}", f"  detection: {sig.detection}", f"  cause:     {sig.message}",
             f"  fix:       {sig.fix}"]
    if sig.action:
        lines.append(f"  action:    {sig.action}")
    lines.append(f"  detector:  {sig.detector}")
    lines += [f"  source:    {s}" for s in sig.sources]
    return "\n".join(lines)


def tagged(sig_id: str, text: str) -> str:
    """A message that names its signature (`gspo env doctor --explain ID` finds the rest)."""
    assert sig_id in BY_ID, sig_id
    return f"{text} [{sig_id}]"
