"""verl's real trainer through gspo on CPU: `gspo train --preset tiny-verl` runs verl.trainer.main_ppo (FSDP2 actor,
vLLM-CPU rollout with verl's weight sync every step, gspo's reward, GSPO loss) as a Ray job on the embedded head
under gspo's job wrapper. What they check is verl's own output: its file logger's metrics.jsonl, its
checkpoint layout, its resume, the wrapper's restart after a verl worker is killed, and the semantics: a gradient
on every step, GSPO's clip binding, vLLM generating with the weights FSDP just trained, the policy learning, and
the native engine (the reference implementation) agreeing with verl on the same task.

One run serves every check (a verl start-up, Ray workers plus the vLLM-CPU server, costs minutes on a busy 2-core
machine; the steps themselves take seconds): it is started, a verl worker is killed (the wrapper restarts verl from
the last checkpoint: the second start), the whole job is killed with SIGKILL, and `gspo train --resume` finishes it
(the third start). The tests below then read what that run left. Two short verl runs in the same home are the
controls that show the semantic checks bite: the weight sync switched off (GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS, a
test-only switch no preset can set) and lr=0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import semantics
import yaml
from conftest import ROOT, gspo

from gspo_cli import layout
from gspo_cli.metrics.jsonl import read_metrics

pytestmark = [pytest.mark.engine, pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(3600)]

RUN, TOTAL = "verl-e2e", 24
FREEZE = "GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS"
RECORD = "GSPO_TEST_RECORD_UPDATE"
# verl's GSPO loss and timing keys (verl/trainer/ppo/metric_utils.py, verl/workers/actor): they come from verl.
VERL_KEYS = ("actor/pg_loss", "actor/pg_clipfrac", "actor/ppo_kl", "actor/grad_norm", "critic/score/mean",
             "response_length/mean", "timing_s/gen", "timing_s/update_actor", "timing_s/update_weights",
             "timing_s/step")


@dataclass
class Story:
    """What the faulted run went through, for the tests to check."""
    home: Path
    run_dir: Path
    steps_first_job: list[int]  # metrics steps written before the worker was killed
    restarted_at: int  # checkpoint the wrapper restarted verl from
    killed_at: int  # last complete checkpoint when the whole job was SIGKILLed
    resume: subprocess.CompletedProcess

    def gspo(self, *args: str) -> subprocess.CompletedProcess:
        return gspo(*args, timeout=600, env={"GSPO_HOME": str(self.home)})

    @property
    def records(self) -> list[dict]:
        return read_metrics(self.run_dir / "metrics.jsonl")


def _steps(run_dir: Path) -> list[int]:
    return [r["step"] for r in read_metrics(run_dir / "metrics.jsonl")]


def _trained(run_dir: Path) -> list[int]:
    return semantics.train_steps(read_metrics(run_dir / "metrics.jsonl"))


def _wait_for(pred, proc: subprocess.Popen, log: Path, what: str, timeout: float = 2400) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if proc.poll() is not None:
            raise AssertionError(f"gspo train ended early ({proc.returncode}) waiting for {what}:\n"
                                 f"{log.read_text(errors='replace')[-4000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}:\n{log.read_text(errors='replace')[-4000:]}")
        time.sleep(1)


def _job_pids(run_dir: Path) -> list[int]:
    """The job wrapper process of this run (`gspo_cli.job_kinds verl-train <run>/verl_job.json`) on this host."""
    spec = str(run_dir / "verl_job.json")
    out = subprocess.run(["pgrep", "-f", f"gspo_cli.job_kinds verl-train {spec}"], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def _wait_for_gone(pids: list[int], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while any(os.path.exists(f"/proc/{p}") for p in pids):
        assert time.monotonic() < deadline, f"still alive after SIGKILL: {pids}"
        time.sleep(0.5)


def _verl_worker_pid(home: Path) -> int:
    """verl's FSDP actor worker (Ray actor WorkerDict / ...ActorRolloutRef...) of the embedded head's job, as a
    user finds it: `gspo cluster status --actors` (the head's state API over its dashboard). Not
    ray.util.state with the GCS address in this process: that leaves a GCS client behind which ends the whole
    pytest process (exit 1, no report) a minute after the head it knew stops."""
    res = gspo("cluster", "status", "--actors", "--json", timeout=300, env={"GSPO_HOME": str(home)})
    assert res.returncode == 0, res.stderr[-3000:]
    actors = json.loads(res.stdout)["actors"]
    pids = [a["pid"] for a in actors if "WorkerDict" in a["class"]]
    assert pids, [a["class"] for a in actors]
    return pids[0]


def _faulted_run(home: Path) -> Story:
    """Start the run, kill a verl worker once it has a checkpoint, wait for the wrapper's restart and a checkpoint
    of the restarted verl, SIGKILL the whole job, then `gspo train --resume` it to the end."""
    # explicit GSPO_HOME: pytest's per-test one is another folder; RECORD: verl's first update, for same_batch
    env = {**os.environ, "GSPO_HOME": str(home), RECORD: str(home.parent / "record")}
    res = gspo("prepare-data", "--preset", "tiny-verl", timeout=900, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    run_dir = home / "runs" / RUN
    health = run_dir / "health.jsonl"
    argv = [sys.executable, "-m", "gspo_cli", "train", "--preset", "tiny-verl", "--run-name", RUN,
            "--set", f"trainer.total_training_steps={TOTAL}"]
    # the follower streams verl's whole log: into a file, as a pipe nobody reads fills up and blocks it
    log = home.parent / "gspo-train.log"
    with log.open("w") as out:
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        _wait_for(lambda: 4 in layout.list_steps(run_dir) and 5 in _steps(run_dir), proc, log, "step 5")
        first = _steps(run_dir)
        os.kill(_verl_worker_pid(home), signal.SIGKILL)  # transient: the wrapper restarts from the last checkpoint
        _wait_for(lambda: health.is_file() and '"rule": "restart"' in health.read_text(), proc, log, "the restart")
        restarted_at = layout.list_steps(run_dir)[-1]
        # the restarted verl saves again, and logs that step (verl saves a step's checkpoint before it logs the
        # step's metrics: a kill between the two loses that step's line for good, which is not what this checks)
        _wait_for(lambda: (last := layout.list_steps(run_dir)[-1]) > restarted_at and last in _trained(run_dir),
                  proc, log, "a checkpoint after the restart, and its step's metrics")
        pids = _job_pids(run_dir)
        assert pids
        for pid in pids:  # the job wrapper and verl's driver under it, as a host crash would
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        proc.kill()  # the `gspo train` follower only streams the job's log
        _wait_for_gone(pids)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    killed_at = layout.list_steps(run_dir)[-1]
    resume = gspo("train", "--resume", RUN, timeout=2400, env=env)
    return Story(home, run_dir, first, restarted_at, killed_at, resume)


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """The $GSPO_HOME of this module's verl runs (the faulted run, then the controls, on one embedded Ray head,
    stopped at the end)."""
    home = tmp_path_factory.mktemp("verl") / "gspo-home"
    home.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GSPO_HOME", str(home))
        mp.delenv("RAY_ADDRESS", raising=False)
        mp.delenv(FREEZE, raising=False)
        mp.delenv(RECORD, raising=False)
        try:
            yield home
        finally:
            gspo("cluster", "down", timeout=300, env={"GSPO_HOME": str(home)})


@pytest.fixture(scope="module")
def story(home):
    """The one faulted verl run of this module."""
    result = _faulted_run(home)
    print(f"\nverl run: first job steps {result.steps_first_job}; worker killed, restarted from "
          f"global_step_{result.restarted_at}; job SIGKILLed at global_step_{result.killed_at}; resumed to {TOTAL}")
    return result


def _control(home: Path, run: str, steps: int, *sets: str, env: dict | None = None) -> list[dict]:
    """A plain tiny-verl run in `home` (no faults, no checkpoints); its metrics records."""
    args = [a for s in ("trainer.save_freq=-1", f"trainer.total_training_steps={steps}", *sets) for a in ("--set", s)]
    res = gspo("train", "--preset", "tiny-verl", "--run-name", run, *args, timeout=2400,
               env={"GSPO_HOME": str(home), **(env or {})})
    assert res.returncode == 0, (res.stdout + res.stderr)[-6000:]
    if env:
        assert "test switch: " + " ".join(f"{k}={v}" for k, v in env.items()) in res.stderr  # announced
    return _records(home, run, steps)


def _records(home: Path, run: str, steps: int) -> list[dict]:
    """The run's metrics records (read from `home`, not from whatever GSPO_HOME this test process has now)."""
    records = read_metrics(home / "runs" / run / "metrics.jsonl")
    assert semantics.train_steps(records) == list(range(1, steps + 1)), (run, [r["step"] for r in records])
    return records


# algorithm.rollout_correction (sequence-level truncated IS + whole-response rejection, verl's
# decoupled_geo_rs_seq_tis): carried by the sync-off control, whose rollout really departs from the trainer, so
# verl's correction has something to weigh and reject (its train/rollout gap is measured before the correction).
ROLLOUT_CORRECTION = ("algorithm.rollout_correction.rollout_is=sequence",
                      "algorithm.rollout_correction.rollout_rs=seq_mean_k1",
                      "algorithm.rollout_correction.rollout_rs_threshold=0.999_1.001")


@pytest.fixture(scope="module")
def frozen(story, home):
    """Control for the weight-sync check: the same run with every sync after the first skipped (vLLM keeps the
    warm-start weights while FSDP trains); it also carries the rollout correction (ROLLOUT_CORRECTION)."""
    return _control(home, "control-frozen", 4, "trainer.val_before_train=false", "trainer.test_freq=-1",
                    *ROLLOUT_CORRECTION, env={FREEZE: "1"})


STILL_TEST_FREQ, STILL_SAVE_FREQ = 5, 16  # 8 % 5 and 8 % 16 != 0: only the last-step rule fires at step 8


@pytest.fixture(scope="module")
def still(story, home):
    """Control for the learning and clip checks: the same run with lr=0 (the gradient is computed, nothing moves).
    8 steps: the learning statistic (last 4 steps vs first 4) of a policy that does not move has the same spread
    whatever the steps between, so the rest would only cost time. It also carries the last-step check of verl's
    schedule: save_freq 16 and test_freq 5 on 8 steps (test_verl_saves_and_validates_on_the_last_step)."""
    return _control(home, "control-lr0", 8, "actor.lr=0.0", f"trainer.test_freq={STILL_TEST_FREQ}",
                    f"trainer.save_freq={STILL_SAVE_FREQ}", TRACKED)


TRACKED = "trainer.loggers=[console,file,tensorboard,wandb,swanlab]"  # the lr=0 control also logs to every tracker


def test_the_lr0_control_logs_to_every_tracker(still, home):
    """verl's own Tracking wrote TensorBoard events, a W&B offline log and a SwanLab offline run in the run folder
    (TENSORBOARD_DIR, WANDB_DIR, SWANLAB_LOG_DIR); each package's reader gives back metrics.jsonl's metric names,
    steps and values (tests/trackers_readback.py), as the native engine's trackers do (test_native_trackers.py)."""
    import trackers_readback as readback

    run = home / "runs" / "control-lr0"
    want = readback.expected(run)
    assert set(VERL_KEYS) <= set(want)
    for name, read in readback.READERS.items():
        assert readback.mismatches(read(run), want, rel=1e-5 if name == "tensorboard" else 1e-9) == [], name
    print("\nread back:", readback.summary(run))


def _table(records: list[dict]) -> str:
    keys = ("critic/score/mean", "actor/grad_norm", "actor/pg_loss", "actor/pg_clipfrac",
            "training/rollout_probs_diff_max", semantics.VAL, "timing_s/gen", "timing_s/step")
    lines = ["step " + " ".join(k.split("/")[-1][:16].rjust(16) for k in keys)]
    for r in records:
        lines.append(f"{r['step']:4d} " + " ".join(
            (f"{r['data'][k]:16.4g}" if k in r["data"] else " " * 15 + "-") for k in keys))
    return "\n".join(lines)


def test_verl_saves_and_validates_on_the_last_step(still, home):
    """The lr=0 control (8 steps, save_freq 16, test_freq 5): verl saves at step 8 only and validates at 5 and 8
    (its fit loop's is_last_step; engines/schedule.py). Without the last-step rule: no save, no validation at 8."""
    from gspo_cli.engines import schedule

    assert layout.list_steps(home / "runs" / "control-lr0") == [8] == schedule.steps(8, STILL_SAVE_FREQ)
    assert [r["step"] for r in still if semantics.VAL in r["data"]] == [0, 5, 8]


def test_steps_and_metrics_are_verls(story):
    """(1) GSPO steps complete; metrics.jsonl is verl's file logger's (verl's GSPO loss and timing keys), and
    `gspo report`, `runs list` / `runs show` (with the health events) read it."""
    assert story.resume.returncode == 0, (story.resume.stdout + story.resume.stderr)[-6000:]
    records = read_metrics(story.run_dir / "metrics.jsonl")
    assert records[0]["step"] == 0 and semantics.VAL in records[0]["data"]  # val_before_train: verl logs it as step 0
    for r in records[1:]:
        missing = [k for k in VERL_KEYS if k not in r["data"]]
        assert not missing, (r["step"], missing)
    rep = story.gspo("report", RUN)
    assert rep.returncode == 0, rep.stderr[-3000:]
    runs = story.gspo("runs", "list", "--json")
    assert runs.returncode == 0, runs.stderr[-2000:]
    assert RUN in runs.stdout
    show = story.gspo("runs", "show", RUN, "--json")
    assert show.returncode == 0, show.stderr[-2000:]
    info = json.loads(show.stdout)
    assert info["steps_done"] == TOTAL, info["steps_done"]
    assert any(h.get("rule") == "restart" for h in info["health_events"]), info["health_events"]
    summary = {k: [r["data"][k] for r in records[1:]] for k in ("critic/score/mean", "timing_s/step", "timing_s/gen",
                                                              "timing_s/update_actor", "timing_s/update_weights")}
    print("\nverl GSPO on CPU:", json.dumps(summary))


def test_checkpoints_in_verls_layout(story):
    """(2) checkpoints as verl writes them: global_step_N/actor with verl's FSDP mark and verl's tracker file."""
    ckpts = story.run_dir / "checkpoints"
    assert (ckpts / "latest_checkpointed_iteration.txt").read_text().strip() == str(TOTAL)
    last = ckpts / f"global_step_{TOTAL}" / "actor"
    assert last.is_dir() and (last / "fsdp_config.json").is_file()  # verl's mark of an FSDP checkpoint
    assert layout.list_steps(story.run_dir)[-1] == TOTAL


def test_killed_worker_is_restarted_from_the_last_checkpoint(story):
    """(3) a verl worker killed mid-run: the wrapper's health.jsonl records the failure and a restart from the
    last checkpoint, and the restarted verl went on from there."""
    events = [json.loads(x) for x in (story.run_dir / "health.jsonl").read_text().splitlines() if x.strip()]
    restarts = [e for e in events if e.get("rule") == "restart"]
    assert restarts, events
    print("\nrestart record:", json.dumps(restarts[0])[:400])
    assert f"global_step_{story.restarted_at}" in json.dumps(restarts[0])
    assert max(story.steps_first_job) >= 5 and story.killed_at > story.restarted_at


def test_kill9_then_resume_runs_every_step_once(story):
    """(2) the whole job killed with SIGKILL mid-run: `gspo train --resume` continues from verl's last checkpoint;
    every step is in metrics.jsonl exactly once."""
    out = story.resume.stdout + story.resume.stderr
    assert story.resume.returncode == 0, out[-6000:]
    assert story.killed_at < TOTAL
    assert f"global_step_{story.killed_at}" in out
    assert _steps(story.run_dir) == list(range(0, TOTAL + 1))  # none lost, none twice (0: validation before training)
    print(f"metrics steps {_steps(story.run_dir)}")


# ---- semantics: each check applied to the run and to a control that must fail it ------------------------------

def _native_preset(dest: Path, **changes: str) -> Path:
    """tiny-verl on the native engine (engine switched, verl-only keys dropped: engine_support.retarget)."""
    import yaml

    from gspo_cli.config import engine_support
    from gspo_cli.config.presets import load_preset

    src = ROOT / "presets" / "tiny-verl.yaml"
    raw, _ = engine_support.retarget(yaml.safe_load(src.read_text()), load_preset(str(src)), "native")
    raw["name"] = "tiny-verl-native"
    for key, value in changes.items():
        section, name = key.split(".")
        raw[section][name] = value
    dest.write_text(yaml.safe_dump(raw, sort_keys=False))
    return dest


def _native_run(home: Path, preset: Path, run: str, steps: int, *sets: str) -> list[dict]:
    args = [a for s in ("trainer.save_freq=-1", f"trainer.total_training_steps={steps}", *sets) for a in ("--set", s)]
    res = gspo("train", "--preset", str(preset), "--run-name", run, "--local", *args, timeout=1200,
               env={"GSPO_HOME": str(home)})
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    return _records(home, run, steps)


def test_every_step_has_a_gradient(story, tmp_path):
    """(1) grad_norm > 0 and pg_loss != 0 on every step. Control: the random-init model on sums of up to 999 in 3
    response tokens (no sample can score: every reward is -1, every GRPO advantage 0), on the native engine
    (seconds): the check fails there. Single-digit sums are no control: a random-init model hits one of 10 answers
    now and then (measured: 2 of 128 samples, grad_norm 0.87)."""
    records = story.records
    print("\ntiny-verl (faulted run, resumed):\n" + _table(records))
    assert semantics.train_steps(records) == list(range(1, TOTAL + 1))
    assert not semantics.gradient_failures(records)
    cold = _native_preset(tmp_path / "cold.yaml", **{"model.path": "builtin:tiny-qwen3-vllm"})
    raw = yaml.safe_load(cold.read_text())
    raw["data"]["arith"]["max_operand"] = 999
    cold.write_text(yaml.safe_dump(raw, sort_keys=False))
    cold_home = tmp_path / "cold-home"  # its own: the arith data differ from the module's runs'
    # --local: in this process (without it prepare-data starts an embedded Ray head in cold_home that nothing stops:
    # CI listed it among the run's leftovers)
    prep = gspo("prepare-data", "--preset", str(cold), "--local", timeout=600, env={"GSPO_HOME": str(cold_home)})
    assert prep.returncode == 0, prep.stderr[-3000:]
    control = _native_run(cold_home, cold, "control-cold", 2, "trainer.val_before_train=false", "trainer.test_freq=-1")
    assert all(r["data"]["critic/score/mean"] == -1.0 for r in control), _table(control)
    assert len(semantics.gradient_failures(control)) == 2, _table(control)


def test_gspo_clip_binds(story, still):
    """(2) GSPO's sequence-level clip (3e-4 / 4e-4) is active: 4 mini-batches per step, so from the second one on
    the sequence ratio has left 1. Control (lr=0: the policy never moves, every ratio is 1): never active."""
    active = semantics.clip_steps(story.records)
    print(f"\npg_clipfrac > 0 on steps {active}; lr=0 control: {semantics.clip_steps(still)}")
    assert len(active) >= TOTAL // 2
    assert semantics.clip_steps(still) == []


def test_vllm_generates_with_the_weights_fsdp_trained(story, frozen):
    """(3) the weight sync: on every step after an update, vLLM's log-probs of its own samples equal the FSDP
    actor's within fp32 rounding (semantics.SYNC_TOL). Control (GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS: vLLM keeps its
    first weights): far above it from the step after the first update."""
    assert not semantics.sync_failures(story.records)
    diff = semantics.series(frozen, "training/rollout_probs_diff_max")
    print(f"\nrollout/actor prob gap: run max {max(semantics.series(story.records, 'training/rollout_probs_diff_max').values()):.3g}; "
          f"sync-off control per step {[f'{diff[s]:.3g}' for s in sorted(diff)]}")
    fails = semantics.sync_failures(frozen)
    # every step the check applies to fails it; the control's rollout correction can reject every sample once vLLM
    # is stale (CI: steps 2-4 all rejected, grad_norm 0), so from then on no step follows an update
    checked = semantics.sync_checked(frozen)
    assert checked and len(fails) == len(checked), (fails, _table(frozen))
    assert min(diff[s] for s in sorted(diff)[1:]) > 100 * semantics.SYNC_TOL


def test_rollout_correction_reaches_verl(story, frozen):
    """algorithm.rollout_correction compiled by gspo and applied by verl's V1 trainer: on the sync-off run (vLLM's
    log-probs depart from the trainer's after the first update) verl logs its IS weights and rejection every step,
    the sequence weights leave 1 and responses are rejected. Control: the faulted run has no section (verl's yaml
    defaults: diagnostics only), and logs no IS weights."""
    for r in frozen:
        assert {"rollout_corr/rollout_is_mean", "rollout_corr/rollout_rs_seq_mean_k1_masked_fraction"} <= set(r["data"])
    later = [r["data"] for r in frozen[1:]]
    deviation = [d["rollout_corr/rollout_is_seq_max_deviation"] for d in later]
    rejected = [d["rollout_corr/rollout_rs_masked_fraction"] for d in later]
    print(f"\nrollout correction on the sync-off run, steps 2..: IS max deviation {deviation}, rejected {rejected}")
    assert max(deviation) > 1e-3 and max(rejected) > 0
    assert not any("rollout_corr/rollout_is_mean" in r["data"] for r in story.records)
    trained = [r for r in story.records if "actor/pg_loss" in r["data"]]  # not the validation-only step 0
    assert trained and all("rollout_corr/kl" in r["data"] for r in trained)  # verl's diagnostics, no section


def test_the_policy_learns(story, still):
    """(4) the mean reward of the last 4 steps exceeds that of the first 4 by semantics.LEARN_MARGIN (set from the
    measured rises of learning and lr=0 runs of both engines, semantics.py); the lr=0 control (same start, same
    data; 8 steps: a policy that does not move draws its rise from the same distribution at any length) does not."""
    run, ctl = semantics.rise(story.records), semantics.rise(still)
    val, val_ctl = semantics.series(story.records, semantics.VAL), semantics.series(still, semantics.VAL)
    print(f"\nreward rise (last 4 - first 4): run {run:+.3f}, lr=0 control {ctl:+.3f}; blocks run "
          f"{[round(b, 3) for b in semantics.blocks(story.records)]}, control {[round(b, 3) for b in semantics.blocks(still)]}"
          f"\nvalidation accuracy run {val}\nlr=0 control {val_ctl}")
    assert run >= semantics.LEARN_MARGIN
    assert ctl < semantics.LEARN_MARGIN
    # greedy validation is reported, not asserted: a policy that samples better can answer greedily worse for a few
    # steps (measured: 3 of 10 native seeds end no higher than they start at 16 steps); lr=0 changes nothing
    assert len(set(val_ctl.values())) == 1  # greedy decoding of unchanged weights: the same answers every time


def test_native_update_is_verls_on_the_same_batch(story):
    """(5) the main proof that the engines do the same math: verl's first update of the run (recorded by
    GSPO_TEST_RECORD_UPDATE) replayed by the native engine from the same weights on the same mini-batches: loss,
    clip fraction, grad norm per mini-batch, the new log-probs and the weights agree within same_batch.TOL (fp32
    rounding). Controls (another clip range, token-mean, one mini-batch) must each fail."""
    import same_batch

    result = same_batch.verdict(story.home.parent / "record", "tiny-verl")
    print("\nsame-batch replay, max difference per quantity:\n" + same_batch.table(result))
    assert not same_batch.failures(result.pop("run"))
    assert all(same_batch.failures(figures) for figures in result.values())


def test_native_and_verl_agree(story, home, tmp_path):
    """(5) the native engine (the readable reference) and verl, from the same warm start on the same data and
    settings: verl's reward per 4-step block lies in the band of the native runs (their mean +- the measured
    half-width, semantics.band). The native runs take verl's prompt order (data.seed = verl's seed: the same
    prompts at every step, engines/native/data.py PromptSampler) and their own sampling seeds. Control, a real run:
    the same native run with lr=0 (a policy that does not learn) must leave the band."""
    from gspo_cli.config.presets import load_preset

    preset = _native_preset(tmp_path / "native.yaml")
    data_seed = load_preset("tiny-verl").trainer.seed  # what verl's data.seed compiles from

    def native(run: str, seed: int, *sets: str) -> list[float]:
        return semantics.blocks(_native_run(home, preset, run, TOTAL, f"trainer.seed={seed}", f"data.seed={data_seed}",
                                            "trainer.val_before_train=false", "trainer.test_freq=-1", *sets))

    curves = [native(f"native-{seed}", seed) for seed in semantics.NATIVE_SEEDS]
    ref = semantics.band(curves, semantics.BLOCK_SD_RUN, semantics.BLOCK_SD_REF)
    verl = semantics.blocks(story.records)
    assert len(verl) == len(ref) == TOTAL // 4, (verl, ref)
    still = native("native-lr0", semantics.NATIVE_SEEDS[0], "actor.lr=0.0")
    print("\nreward per 4-step block: verl " + " ".join(f"{v:+.3f}" for v in verl)
          + "\nnative mean +- band " + " ".join(f"{m:+.3f}+-{w:.3f}" for m, w in ref)
          + "\nnative seeds " + "; ".join(" ".join(f"{v:+.3f}" for v in c) for c in curves)
          + "\nnative lr=0 control " + " ".join(f"{v:+.3f}" for v in still) + f": {semantics.outside(still, ref)}")
    assert not semantics.outside(verl, ref)
    assert semantics.outside(still, ref)


def test_eval_before_and_after(story):
    """`gspo eval arith` of the warm start and of the run's last checkpoint (verl's FSDP checkpoint, merged by
    gspo) on the same 64 problems: figures for the record (greedy accuracy is not the learning check: see
    test_the_policy_learns)."""
    def result(model: str) -> dict:
        res = story.gspo("eval", "arith", "--preset", "tiny-verl", "--model", model, "--local", "--json")
        assert res.returncode == 0, res.stderr[-3000:]
        return json.loads(res.stdout)

    before, after = result("builtin:tiny-qwen3-vllm-warm"), result(f"{RUN}:{TOTAL}")
    print(f"\neval arith (greedy, 64 problems): warm start {before['accuracy']:.3f} -> {RUN}:{TOTAL} "
          f"{after['accuracy']:.3f}")
    assert before["metrics"]["num_problems"] == after["metrics"]["num_problems"] == 64
    assert before["metrics"]["extraction_rate"] > 0.9 and after["metrics"]["extraction_rate"] > 0.9
