"""What to look at when an acceptance metric fails: one hint per metric, naming failure-catalog entries
(gspo_cli/signatures.py, `gspo env doctor --explain ID`) where one fits. Data only."""

from __future__ import annotations

from gspo_cli.accept import rules

HINTS: dict[str, tuple[str, tuple[str, ...]]] = {
    rules.REWARD: (
        "the policy learned differently from the baseline's run: check the data (`gspo prepare-data` for this preset: same "
        "rows, same order; data.shuffle false), the reward (reward.verifier verl scores as upstream does), the "
        "model files (same revision), the seed, and the recipe traps `gspo train --dry-run` reports",
        ("gspo-token-mean", "gspo-ppo-clip", "gspo-bypass-mode"),
    ),
    rules.PROBS_DIFF: (
        "the trainer's and the rollout's log-probs of the same tokens differ by another amount than in the baseline's run: "
        "the vLLM-Ascend / torch_npu / CANN versions (`gspo env doctor`), the rollout dtype and the weight sync",
        ("run-mismatch-growing", "stack-known-bad"),
    ),
    rules.THROUGHPUT: (
        "the step processes tokens at another speed than the baseline's machine: the exports for this stack "
        "(`gspo env exports`), devices held by stale processes, the device count (A3 dies vs cards), the rollout "
        "share of the step (timing_s/gen)",
        ("npu-stale-process", "a3-dies-vs-cards", "run-rollout-long-tail"),
    ),
    rules.STEP_TIME: (
        "the step takes another time than the baseline's: as for perf/throughput; also compare timing_s/gen, "
        "timing_s/update_actor and timing_s/old_log_prob with `gspo report RUN`",
        ("npu-stale-process", "run-rollout-long-tail"),
    ),
    rules.MEMORY: (
        "the actor's peak device memory differs from the baseline's by more than 1 GB: offload settings "
        "(actor.param_offload / optimizer_offload), the FSDP and sequence-parallel sizes, the torch_npu version",
        ("run-npu-oom-sleep", "stack-known-bad"),
    ),
}


def hint(metric: str) -> str:
    """The hint for a failed metric, with the catalog ids to read (`gspo env doctor --explain ID`)."""
    text, ids = HINTS.get(metric, ("compare the run with the baseline's source", ()))
    return text + (f" (failure catalog: {', '.join(ids)}; `gspo env doctor --explain ID`)" if ids else "")
