"""A whole run's time from the step-time model: steps x the predicted step (pure). The step already carries
validation (`testing`, every test_freq steps) and checkpoints (`save_checkpoint`, every save_freq) spread over the
steps (plan/model.py), so the product is the run; verl's validation before training (step 0) and its start-up
(Ray workers, the vLLM server) are not modelled and come on top."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gspo_cli.jobs.steps import duration

NOT_MODELLED = "start-up and the validation before step 1 not included"


@dataclass(frozen=True)
class RunTime:
    steps: int
    step_s: float
    devices: int
    resource: str  # what the devices are ("NPU", "GPU", "CPU"): the device table's Ray resource, else CPU
    profile: str

    @property
    def total_s(self) -> float:
        return self.steps * self.step_s

    def describe(self) -> str:
        """`15 steps x ~2,585 s predicted (a3 profile) = ~10h46m on 64 NPU`."""
        step = f"{self.step_s:,.0f}" if self.step_s >= 10 else f"{self.step_s:.2g}"
        return (f"{self.steps} steps x ~{step} s predicted ({self.profile} profile) = ~{duration(self.total_s)} "
                f"on {self.devices} {self.resource}")

    def to_json(self) -> dict[str, Any]:
        return {"steps": self.steps, "step_s": round(self.step_s, 3), "total_s": round(self.total_s, 1),
                "devices": self.devices, "resource": self.resource, "profile": self.profile,
                "not_included": NOT_MODELLED}


def steps_of(preset: Any) -> tuple[int | None, str]:
    """(the run's steps, why unknown): trainer.total_training_steps, else verl's epochs x (prepared rows // batch)
    (sizing/run_length.py); unknown while the data is not prepared."""
    if preset.trainer.total_training_steps:
        return int(preset.trainer.total_training_steps), ""
    from gspo_cli.shell import command
    from gspo_cli.sizing import run_length
    from gspo_cli.sizing.report import data_facts

    facts = data_facts(preset)
    if facts.train_rows is None:
        return None, (f"{preset.trainer.total_epochs} epochs of a dataset not prepared here, so its steps are not known "
                      f"({command('gspo', 'prepare-data', '--preset', preset.name)}, or set trainer.total_training_steps)")
    return run_length.of(preset, facts.train_rows, facts.train_rows_in).total_steps, ""


def of(steps: int, step_s: float, preset: Any, profile: str) -> RunTime:
    """The run of `steps` steps of `step_s` each on the preset's cluster."""
    from gspo_cli.config import devices

    c = preset.cluster
    return RunTime(steps, step_s, c.nnodes * c.devices_per_node, devices.of(preset).ray_resource or "CPU", profile)
