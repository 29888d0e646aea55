"""`algorithm.filter_groups`: DAPO's dynamic sampling as a preset option (pure, no verl).

verl's `algorithm.filter_groups` (verl/trainer/config/algorithm.py `FilterGroupsConfig`; read by the V1 trainer's
`_resolve_filter_groups_metric`, trainer/ppo/v1/trainer_base.py) drops each group whose `metric` is the same for
every response (all right or all wrong: zero GRPO advantage) and generates more until the batch is full. The
defaults are verl 0.9.1's yaml ones (trainer/config/ppo_trainer.yaml: enable False, metric `reward`, the
canonical pre-KL score; the dataclass default None refuses enable: true). gspo compiles both always
(engines/verl/explicit_defaults.py), so a preset's file says which sampling it runs.
"""

from __future__ import annotations

from gspo_cli.config.section import OneLine, Section


class FilterGroups(Section):
    enable: bool = False
    # "reward" = the score itself; another name reads that field of the reward's extra info (e.g. "acc")
    metric: OneLine = "reward"
