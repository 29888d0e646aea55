"""The job wrapper both engines' training jobs run: start the training process, pass its log and events through,
watch metrics.jsonl (progress and health rules), catch stalls, and restart it on transient failures.

One attempt = one training process (`verl.trainer.main_ppo`, or the native trainer's `train-attempt` job
command) in its own process group. While it runs, every new metrics.jsonl line goes through the health
`Monitor`; its events are appended to runs/<run>/health.jsonl and emitted as `health` events (the line under the
progress bar). A rule with action `stop`, or a stall with action `stop`, makes the wrapper stop the process
(SIGTERM to its group, SIGKILL after `trainer.restart.kill_grace_s`). When an attempt fails, `failures.classify`
decides: a transient failure is restarted from the last complete checkpoint after an exponential backoff, as long
as the budget (`trainer.max_restarts` restarts in a row without a new step) lasts; anything else ends the job.
Every restart and the final verdict are health.jsonl records, so they survive the job's log.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gspo_cli.jobs import events
from gspo_cli.jobs.failures import Attempt, backoff_s, classify, silent_exit
from gspo_cli.metrics.health import HEALTH_FILE, Context, Event, Monitor, append_event, validation_accuracy
from gspo_cli.metrics.jsonl import Tail

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

POLL_S = 0.25
LOG_TAIL_LINES = 60
CAPACITY_POLL_S = 10.0
NO_CAPACITY_EXIT = 75  # EX_TEMPFAIL, as the follower's node-lost exit: rejoin the node, then resume


@dataclass
class Child:
    """How to run one engine's training process; the engine's job module fills it in."""

    name: str  # in messages: "verl", "native trainer"
    run_dir: Path
    metrics: Path
    command: Callable[[int, int | None], list[str]]  # (attempt index, resume step) -> argv
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)
    total_steps: int | None = None
    # verl reports no progress of its own: the wrapper turns metrics lines into progress events.
    progress_from_metrics: bool = False
    progress_metrics: dict[str, str] = field(default_factory=dict)  # verl name -> short label
    before_attempt: Callable[[int, int | None], None] | None = None  # (attempt index, resume step)
    after_attempt: Callable[[], None] | None = None
    resume_step: Callable[[], int | None] = lambda: None  # the step of the last complete checkpoint
    # The cluster's device-slot shortfall for this job and what to do about it (jobs/capacity.py), None when it
    # fits or is unknown; checked before each attempt and every CAPACITY_POLL_S while one runs.
    capacity: Callable[[], str | None] | None = None


class Supervisor:
    # The stall clock (monotonic seconds). Tests replace it to decide when time passes, so a loaded machine
    # cannot make a normal step look stalled; the restart backoff and kill grace periods stay real sleeps.
    clock: Callable[[], float] = staticmethod(time.monotonic)

    def __init__(self, child: Child, preset: Preset,
                 on_failure: Callable[[str, str], None] | None = None) -> None:
        trainer = preset.trainer
        self.child = child
        self.on_failure = on_failure  # (kind, cause) of the attempt that ended the job: the run's job state
        self.max_restarts = trainer.max_restarts
        self.restart_cfg = trainer.restart
        self.monitor = Monitor(trainer.health, Context.from_preset(preset))
        self.health_path = child.run_dir / HEALTH_FILE
        self.attempts: list[Attempt] = []
        self.stop_event: Event | None = None
        self.total_steps = child.total_steps

    # ------------------------------------------------------------ recording
    def record(self, event: Event) -> None:
        append_event(self.health_path, event)
        events.health(event.to_json())

    # ------------------------------------------------------------ the restart loop
    def run(self) -> int:
        without_progress = 0
        resume_step: int | None = None
        best = -1  # the highest step any attempt reached: redoing steps after a restart is not progress
        while True:
            if (short := self._short()) is not None:  # verl would wait forever for its placement groups
                return self._give_up(self._unplaceable(short, resume_step))
            attempt = self._attempt(len(self.attempts), resume_step)
            self.attempts.append(attempt)
            if attempt.code == 0 and (silent := silent_exit(attempt, self.total_steps, self._reached(best))):
                attempt.code, (attempt.kind, attempt.cause) = 1, silent
                return self._give_up(attempt)
            if attempt.code == 0:
                return 0
            if attempt.last_step is not None and attempt.last_step > best:
                without_progress, best = 0, attempt.last_step
            if attempt.kind != "transient" or without_progress >= self.max_restarts:
                return self._give_up(attempt)
            without_progress += 1
            resume_step = self.child.resume_step()
            delay = backoff_s(without_progress, self.restart_cfg.backoff_base_s, self.restart_cfg.backoff_max_s)
            self.record(Event(
                attempt.last_step or resume_step or 0, "restart", "restart", attempt.number, self.max_restarts,
                f"attempt {attempt.number} failed ({attempt.cause}); restart {without_progress}/{self.max_restarts} "
                f"from {f'checkpoint global_step_{resume_step}' if resume_step else 'the start'} in {delay:.0f}s",
                extra={"attempt": attempt.number, "cause": attempt.cause, "excerpt": attempt.excerpt[-10:],
                       "resume_step": resume_step, "backoff_s": delay}))
            time.sleep(delay)

    def _short(self) -> str | None:
        return self.child.capacity() if self.child.capacity is not None else None

    def _unplaceable(self, short: str, resume_step: int | None) -> Attempt:
        """The attempt that was not started: the cluster lacks the device slots (a lost node)."""
        attempt = Attempt(number=len(self.attempts) + 1, resume_step=resume_step, code=NO_CAPACITY_EXIT,
                          kind="capacity", cause=short)
        self.attempts.append(attempt)
        return attempt

    def _reached(self, best: int) -> int | None:
        """The furthest step the run has: this job's attempts or the last complete checkpoint (an earlier job)."""
        saved = self.child.resume_step()
        return max((s for s in (best, saved) if s is not None and s >= 0), default=None)

    def _give_up(self, attempt: Attempt) -> int:
        code = attempt.code if attempt.code and attempt.code > 0 else 1
        if attempt.kind == "capacity":
            code = attempt.code = NO_CAPACITY_EXIT
        if self.on_failure is not None:
            self.on_failure(attempt.kind, attempt.cause)
        if len(self.attempts) > 1 or attempt.kind in ("transient", "capacity"):
            reason = "restart budget spent" if attempt.kind == "transient" else f"{attempt.kind} failure"
            self.record(Event(attempt.last_step or 0, "restart", "fail", len(self.attempts), self.max_restarts,
                              f"{reason} after {len(self.attempts)} attempt(s): {attempt.cause}",
                              extra={"attempts": [a.summary() for a in self.attempts]}))
            for earlier in self.attempts:
                print(earlier.summary(), file=sys.stderr)
        # The job's last line: what ended it, for `gspo jobs logs` and the follower's summary.
        if attempt.kind == "stopped":
            print(f"{self.child.name} stopped: {attempt.cause}", file=sys.stderr)
        elif attempt.kind == "capacity":
            print(f"{self.child.name} cannot be placed on the cluster: {attempt.cause}", file=sys.stderr)
        else:
            print(f"{self.child.name} exited with code {attempt.code}: {attempt.cause}", file=sys.stderr)
        sys.stderr.flush()
        return code

    # ------------------------------------------------------------ one attempt
    def _attempt(self, index: int, resume_step: int | None) -> Attempt:
        child = self.child
        if child.before_attempt is not None:
            child.before_attempt(index, resume_step)
        attempt = Attempt(number=index + 1, resume_step=resume_step)
        self.monitor.new_attempt(resume_step if index else None, now=self.clock())
        tail = Tail(child.metrics, child.metrics.stat().st_size if child.metrics.exists() else 0)
        env = {**os.environ, **child.env, "GSPO_ATTEMPT": str(index)}
        started = time.monotonic()
        # Its own session, so a stop reaches the whole process group; and it dies with the wrapper (SIGKILL of
        # the job, `ray job stop`), never left training as an orphan next to a restarted run.
        proc = subprocess.Popen(child.command(index, resume_step), env=env, cwd=child.cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, bufsize=1, start_new_session=True,
                                preexec_fn=_die_with_parent)
        lines: queue.Queue[str | None] = queue.Queue()
        reader = threading.Thread(target=_pump, args=(proc, lines), daemon=True)
        reader.start()
        log_tail: deque[str] = deque(maxlen=LOG_TAIL_LINES)
        stopped_by = None
        watch = _CapacityWatch(child.capacity) if child.capacity is not None else None
        try:
            stopped_by = self._watch(proc, tail, lines, log_tail, attempt, watch)
        except BaseException:  # Ctrl-C, SIGTERM (see `supervise`), a bug here: never leave the trainer behind
            self._stop(proc)
            raise
        finally:
            if watch is not None:
                watch.stop()
            reader.join(timeout=30)
            self._drain(lines, log_tail)
            self._metrics(tail, attempt)  # lines written just before the exit
            if child.after_attempt is not None:
                child.after_attempt()
        attempt.code = proc.returncode
        attempt.wall_s = time.monotonic() - started
        attempt.excerpt = [line.rstrip() for line in log_tail if line.strip()][-20:]
        if attempt.code != 0 or stopped_by:
            attempt.code = attempt.code or 1
            attempt.kind, attempt.cause = classify(attempt.code, list(log_tail), stopped_by=stopped_by,
                                                   made_progress=attempt.steps > 0)
            if stopped_by == "capacity" and watch is not None and watch.short:
                attempt.kind, attempt.cause = "capacity", watch.short
            elif attempt.kind == "stopped" and self.stop_event is not None:
                event = self.stop_event
                attempt.cause = f"health rule {event.rule} (action stop) at step {event.step}: {event.message}"
        return attempt

    def _watch(self, proc, tail: Tail, lines, log_tail, attempt: Attempt, watch=None) -> str | None:
        """Until the process exits: pass its output on, feed metrics to the monitor, act on stop events and on a
        cluster that lost the device slots the job needs (verl would wait for its placement groups forever)."""
        while True:
            done = self._drain(lines, log_tail, wait=POLL_S)
            for event in self._metrics(tail, attempt):
                if event.action == "stop":
                    self.stop_event = event
                    events.message(f"health rule {event.rule} (action stop) at step {event.step}: stopping the "
                                   "training process")
                    self._stop(proc)
                    return event.rule
            if done and proc.poll() is not None:
                return None
            if watch is not None and watch.short and proc.poll() is None:
                events.message(f"the cluster cannot hold this job any more ({watch.short}): stopping the training "
                               "process")
                self._stop(proc)
                return "capacity"
            finishing = self.total_steps is not None and (self.monitor.last_step or 0) >= self.total_steps
            if proc.poll() is None and not finishing and (stall := self.monitor.check_stall(self.clock())) is not None:
                self.record(stall)
                if stall.action == "stop":
                    events.message(f"stall: stopping the training process ({stall.message})")
                    self._stop(proc)
                    return "stall"

    def _drain(self, lines, log_tail, wait: float = 0.0) -> bool:
        """Pass queued output lines on; True once the process's output has ended."""
        try:
            item = lines.get(timeout=wait) if wait else lines.get_nowait()
        except queue.Empty:
            return False
        while True:
            if item is None:
                return True
            event = events.parse_line(item)
            if event is not None:
                if event.get("kind") == "progress" and event.get("task") == "train" and event.get("total"):
                    self.total_steps = int(event["total"])  # the native trainer knows its step count
                if event.get("kind") == "message":
                    log_tail.append(str(event.get("text", "")))
                events.emit(event.pop("kind"), **event)
            else:
                log_tail.append(item)
                sys.stdout.write(item)
                sys.stdout.flush()
            try:
                item = lines.get_nowait()
            except queue.Empty:
                return False

    def _metrics(self, tail: Tail, attempt: Attempt) -> list[Event]:
        raised = []
        for record in tail.poll():
            step, data = record["step"], record["data"]
            attempt.first_step = step if attempt.first_step is None else attempt.first_step
            attempt.last_step = step
            if self.child.progress_from_metrics:
                shown = {label: float(data[k]) for k, label in self.child.progress_metrics.items()
                         if isinstance(data.get(k), (int, float))}
                if (val_acc := validation_accuracy(data)) is not None:  # a validation step (verl: test_freq)
                    shown["val_acc"] = val_acc
                events.progress(step, self.child.total_steps, task="train", metrics=shown)
            for event in self.monitor.observe(step, data, now=self.clock()):
                self.record(event)
                raised.append(event)
        return raised

    def _stop(self, proc) -> None:
        """SIGTERM to the training process's group, SIGKILL after the grace period."""
        for sig, wait in ((signal.SIGTERM, self.restart_cfg.kill_grace_s), (signal.SIGKILL, 30.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue


class _CapacityWatch:
    """Polls the capacity check in a daemon thread (it asks the head, which can take seconds); `short` is set
    once two readings in a row find the cluster short, so one odd reading never stops a job."""

    def __init__(self, check: Callable[[], str | None], every_s: float | None = None) -> None:
        self.check = check
        # read when the watch starts, not when this module was imported (a test sets the module's value)
        self.every_s = CAPACITY_POLL_S if every_s is None else every_s
        self.short: str | None = None
        self._stopped = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        streak = 0
        while not self._stopped.wait(self.every_s):
            found = self.check()
            streak = streak + 1 if found else 0
            if streak >= 2:
                self.short = found
                return

    def stop(self) -> None:
        self._stopped.set()


def _pump(proc, lines: queue.Queue) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.put(line)
    proc.wait()
    lines.put(None)


def _die_with_parent() -> None:
    """In the child before exec (Linux): SIGKILL it when the wrapper dies. Elsewhere a no-op."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


def _exit_on_sigterm(signum, frame) -> None:
    raise SystemExit(128 + signum)


def supervise(child: Child, preset: Preset, on_failure: Callable[[str, str], None] | None = None) -> int:
    """Run the training process under the wrapper until it finishes, fails for good, or a rule stops it;
    `on_failure(kind, cause)` hears why it failed (`failures.classify`'s kind and cause line)."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm) if main else None  # `ray job stop`
    try:
        return Supervisor(child, preset, on_failure).run()
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
