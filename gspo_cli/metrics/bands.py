"""Expected-value bands of a healthy GSPO run, as data: each band says which metric, the range a healthy run stays
in, what to check when it leaves, and where the figures come from (a public source with the figure it shows).
Pure data, no I/O. The health rules (metrics/health.py: `clip_fraction`, `rollout_gap`, `entropy_collapse`,
`entropy_rising`, `response_shrink`) read their default thresholds and their messages' "source:" from here, and
docs/health.md lists the table (tests/metrics/test_bands.py checks both against it).

A source's figure is what the source shows, quoted in our words; the band's limits are gspo's choice around those
figures (stated in `why`), not a number any source prescribes. Sources name a repository path and commit, an
issue or pull request, or a paper with its figure.
"""

from __future__ import annotations

from dataclasses import dataclass

from gspo_cli.algo.losses import GSPO_CLIP_BAND


@dataclass(frozen=True)
class Source:
    where: str  # URL, or repo:path@commit
    figure: str  # what it shows, in our words


@dataclass(frozen=True)
class Band:
    name: str  # the health rule that enforces it
    metric: str  # verl's metric name
    low: float | None  # None: no lower bound
    high: float | None  # None: no upper bound
    applies: str  # when the band holds (loss modes, schedule)
    why: str  # how the limits follow from the sources
    check: str  # what to look at when it fires
    sources: tuple[Source, ...]

    def cite(self) -> str:
        """The short "source:" tail of a health message (the first source's address)."""
        return f"source: {self.sources[0].where}"


GSPO_PAPER = "https://arxiv.org/abs/2507.18071"
ASCEND_RECIPE = "verl-project/verl-ascend-recipe@2a3edec04b4d4aaee83b61f050d507c431f63156"

CLIP_FRACTION = Band(
    "clip_fraction", "actor/pg_clipfrac", *GSPO_CLIP_BAND,  # the GSPO losses' band (algo/losses.py entries)
    "loss_mode gspo / gspo_token with more than one policy update per step (ppo_epochs > 1 or several "
    "mini-batches); a fully on-policy step has ratio 1 and clips nothing, so the lower bound is 0 there",
    "published GSPO runs clip 0.1-0.3 of the batch (0.15 in the paper; 0.30 early and ~0.10 later in verl#2775), two "
    "orders of magnitude above GRPO; below 0.02 the clip never binds (a token-level clip range set by mistake); "
    "above 0.5 most of the batch is clipped (verl#7356's fully-async run sat at 0.35-0.44 and learned slowly)",
    "clip_ratio_low/high (GSPO: 3e-4 / 4e-4), mini-batches per step, lr; in an async trainer.mode, staleness",
    (Source(GSPO_PAPER, "Fig. 4: GSPO clips ~0.15 of tokens, GRPO ~0.0013 (4 mini-batches per rollout batch)"),
     Source("https://github.com/verl-project/verl/pull/2775",
            "GSPO-token on GSM8K, 4 mini-batches: pg_clipfrac ~0.30 at first, settling near 0.10; GRPO ~0.0003"),
     Source("https://github.com/verl-project/verl/issues/7356",
            "fully-async GSPO (Qwen3.5-35B-A3B, Megatron): pg_clipfrac 0.35-0.44, reward rising only slowly; "
            "~0 in the same run synchronous")),
)

ROLLOUT_GAP = Band(
    "rollout_gap", "training/rollout_probs_diff_mean", None, 0.02,
    "verl with rollout.calculate_log_probs and no bypass mode (the native engine logs the same metric when its old "
    "log-probs come from a separate pass); the metric is verl's mean |p_train - p_rollout| over response tokens, "
    "in probability (verl/utils/debug/metrics.py exponentiates the log-probs first)",
    "verl's own nightly GSPO baselines on Ascend hold 0.0045 (Qwen3-8B, FSDP2) and 0.0056 (Qwen3-30B, Megatron), "
    "checked to within 5% every night: a healthy bf16 stack sits at a few 1e-3; 0.02 is ~4x those, where a "
    "precision or kernel problem is left, not noise",
    "the rollout/trainer numerics: dtype (bf16 vs fp32 logits), vLLM graph mode and kernels, the weight sync; "
    "algorithm.rollout_correction (rollout_is: sequence) corrects what remains",
    (Source(f"{ASCEND_RECIPE}:baseline/a2/nightly_log/run_gspo_qwen3_8b_fsdp2_npu/baseline_gspo_qwen3_8b_fsdp2_npu.txt",
            "training/rollout_probs_diff_mean 0.0045346 (mean of steps 5-14, GSPO Qwen3-8B FSDP2 on A2)"),
     Source(f"{ASCEND_RECIPE}:baseline/a3/nightly_log/run_gspo_qwen3_30b_megatron_npu/baseline_gspo_qwen3_30b_megatron_npu.txt",
            "training/rollout_probs_diff_mean 0.005604 (mean of steps 5-14, GSPO Qwen3-30B Megatron on A3)"),
     Source(f"{ASCEND_RECIPE}:baseline/check_npu.py",
            "the nightly fails when rollout_probs_diff_mean moves more than 5% from its baseline")),
)

ENTROPY_FLOOR = Band(
    "entropy_collapse", "actor/entropy", 0.02, None,
    "every loss mode; a task the policy solves outright (the tiny preset) rightly ends near 0 and turns the rule off",
    "reasoning runs keep token entropy in the 0.1-1 range; below 0.02 a group's samples are near-identical and "
    "GRPO advantages vanish (entropy collapse, verl#5953); a 90% fall within 100 steps is the collapse under way",
    "entropy_coeff, clip_ratio_high (clip-higher), lr, the reward's variance within groups",
    (Source("https://github.com/verl-project/verl/issues/5953",
            "entropy collapse training Qwen3.5-35B-A3B with GRPO (curve in the report)"),
     Source("https://github.com/rllm-org/rllm/issues/116",
            "maintainer: entropy rising is fine while it stays below 1")),
)

ENTROPY_CEILING = Band(
    "entropy_rising", "actor/entropy", None, 1.0,
    "every loss mode, once the entropy has risen above its own early level (a model that starts above 1.0 and "
    "falls, as a random-init tiny model does, never fires)",
    "rllm#116: rising entropy is acceptable while below 1; the reported run that climbed to 2.0 lost accuracy. "
    "Above 1.0 and above 1.5x its early level, the policy is drifting toward noise (the mismatch-collapse reports "
    "show entropy and grad norm climbing before the reward falls)",
    "training/rollout_probs_diff_mean (a growing train/rollout gap), clip_ratio_high, lr, entropy_coeff",
    (Source("https://github.com/rllm-org/rllm/issues/116",
            "maintainer: fine while entropy < 1; the reporter's run reached 2.0 over 1000 steps and its "
            "performance fell"),),
)

RESPONSE_SHRINK = Band(
    "response_shrink", "response_length/mean", None, None,
    "every loss mode; judged against the run's own early response length (median of the first steps after "
    "warm-up), not an absolute length",
    "in healthy math RL runs the mean response grows with training (simpleRL-reason#65: the maintainers' "
    "response_length/mean rises; a reporter whose length fell saw worse validation); a mean that falls to half of "
    "its early level is the policy giving up on reasoning (shorter guesses, or a collapse)",
    "critic/score/mean per length, the overlong penalty, response_length/clip_ratio, entropy",
    (Source("https://github.com/hkust-nlp/simpleRL-reason/issues/65",
            "maintainers: response_length/mean increases during training; a reporter whose length fell saw "
            "worse validation"),),
)

BANDS: dict[str, Band] = {b.name: b for b in (CLIP_FRACTION, ROLLOUT_GAP, ENTROPY_FLOOR, ENTROPY_CEILING,
                                              RESPONSE_SHRINK)}
