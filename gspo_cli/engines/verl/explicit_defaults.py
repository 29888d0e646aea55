"""verl 0.9.1 defaults that change what a GSPO/DAPO preset means when left to verl, compiled from the preset's
own keys every time (pure). Found by comparing each built-in preset's compiled overrides with verl 0.9.1's
`trainer/config/_generated_ppo_trainer.yaml`; the keys verl reads there and gspo did not set were:

- `algorithm.filter_groups.{enable,metric}`: DAPO dynamic sampling off, metric `reward` (yaml) / None
  (dataclass): a DAPO recipe copied without them trains on zero-advantage groups;
- `actor.optim.lr_scheduler_type`: constant after the warmup (upstream GRPO/DAPO scripts differ; the native
  engine is constant too).

The other implicit keys are either read only by losses gspo does not compile (policy_loss.clip_cov_*,
kl_cov_ratio, ppo_kl_coef, actor.clip_ratio: gspo sets clip_ratio_low/high), judged by preflight already
(algorithm.rollout_correction: traps.py), or do not change the objective (data.filter_overlong_prompts: gspo's
prepare-data fixes the prompt set; actor.shuffle, betas). docs/presets.md lists them per preset.
"""

from __future__ import annotations

from gspo_cli.engines.verl.overrides import Row

# (verl key, preset key): the preset key's value is compiled into the verl key.
EXPLICIT: tuple[tuple[str, str], ...] = (
    ("algorithm.filter_groups.enable", "algorithm.filter_groups.enable"),
    ("algorithm.filter_groups.metric", "algorithm.filter_groups.metric"),
    ("actor_rollout_ref.actor.optim.lr_scheduler_type", "actor.lr_scheduler_type"),
)

# The Megatron route's optimizer (verl optim/megatron.yaml, McoreOptimizerConfig) names the schedule
# `lr_decay_style` (default constant; cosine too) and has no `lr_scheduler_type`.
MEGATRON_KEYS = {"actor_rollout_ref.actor.optim.lr_scheduler_type": "actor_rollout_ref.actor.optim.lr_decay_style"}


def rows(megatron: bool) -> tuple[Row, ...]:
    """Every EXPLICIT key as compile's table rows, spelled for the preset's training route."""
    return tuple(Row(MEGATRON_KEYS.get(key, key) if megatron else key, path) for key, path in EXPLICIT)
