"""Findings 3, 4 and 7 of issue #39: what people hand each other (a baseline file, a run folder) is data.

Each test runs the real `gspo` in a subprocess, as a user who was handed the file would, and says what 85f9e67
did. Finding 6 (the weight-sync store) is test_weight_sync_store.py; the generated hostile folders and baselines
are test_hostile_data_property.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from gspo_cli.accept import rules as R

pytestmark = pytest.mark.security

ESC = "\x1b"
# an OSC 8 hyperlink, a screen clear, a window-title change (OSC 0, BEL-ended), a DCS string and 8-bit C1 controls
HOSTILE_TEXT = (f"x{ESC}]8;;http://evil.example/{ESC}\\click{ESC}]8;;{ESC}\\ {ESC}[2J{ESC}[H {ESC}]0;pwned\x07 "
                f"{ESC}P1$r0m{ESC}\\ \x9b31m \x9d0;t\x9c end")
FORBIDDEN = [ESC, "\x07", "\x9b", "\x9c", "\x9d", "\x90"]


def _one_error(proc, says: str, code: int = 2) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1 and says in errors[0], proc.stderr[-2000:]
    assert proc.returncode == code, (proc.returncode, proc.stderr[-2000:])


def _run_with_metrics(home: Path, name: str, reward: float = 0.5) -> Path:
    run = home / "runs" / name
    run.mkdir(parents=True)
    (run / "job_state.json").write_text(json.dumps({"status": "succeeded"}))
    lines = [json.dumps({"step": s, "data": {R.REWARD: reward, R.PROBS_DIFF: 1e-3, R.THROUGHPUT: 100.0,
                                             R.STEP_TIME: 1.0, R.MEMORY: 2.0}}) for s in range(1, 16)]
    (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    return run


def _baseline(path: Path, *, preset: str | None, sets: list[str], title: str = "a colleague's baseline") -> Path:
    values = {m: v for m, v in ((R.REWARD, 0.5), (R.PROBS_DIFF, 1e-3), (R.THROUGHPUT, 100.0), (R.STEP_TIME, 1.0),
                                (R.MEMORY, 2.0))}
    path.write_text(json.dumps({"format": "gspo-accept-baseline/1", "id": "colleague", "title": title,
                                "preset": preset, "sets": sets, "values": values}))
    return path


# ---------------------------------------------------------------- finding 3: a baseline file is data


def test_a_baseline_file_never_names_the_preset_gspo_runs(tmp_path, gspo_home, gspo_at):
    """85f9e67 ran the file's preset with the file's `sets` (here one that moves the run folder out of
    $GSPO_HOME; in the red-team run, env.vars that ran a command) with nothing shown before the run."""
    planted = tmp_path / "planted-runs"
    evil = _baseline(tmp_path / "evil.json", preset="tiny",
                     sets=["trainer.total_training_steps=15", f"paths.runs_dir={planted}"])
    proc = gspo_at("accept", "--baseline", str(evil), "--local", timeout=600)
    _one_error(proc, "records preset 'tiny'; gspo runs only a preset you name")
    assert not planted.exists() and not (gspo_home / "runs").exists()


def test_a_baseline_files_preset_and_sets_are_shown_not_run(tmp_path, gspo_home, gspo_at):
    """The file's recorded preset and sets are printed before anything runs and kept in --json; only gspo's own
    nightly shape among them is applied (85f9e67's --json had no such fields and applied them all)."""
    planted = tmp_path / "planted-runs"
    _run_with_metrics(gspo_home, "mine")
    evil = _baseline(tmp_path / "evil.json", preset="tiny",
                     sets=["trainer.total_training_steps=15", f"paths.runs_dir={planted}"])
    proc = gspo_at("accept", "--baseline", str(evil), "--run", "mine", "--json")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert out["baseline"]["recorded_preset"] == "tiny"
    assert out["baseline"]["recorded_sets"] == ["trainer.total_training_steps=15", f"paths.runs_dir={planted}"]
    assert out["baseline"]["sets_not_applied"] == [f"paths.runs_dir={planted}"]
    assert f"recorded:    preset tiny --set trainer.total_training_steps=15 --set paths.runs_dir={planted}" \
        in proc.stderr
    assert f"not applied: --set paths.runs_dir={planted}" in proc.stderr
    assert not planted.exists()



def test_a_baseline_files_secret_sets_are_redacted_where_shown(tmp_path, gspo_home, gspo_at):
    """A baseline's recorded sets are shown by the secret rule's key path (private.redact_set), in text and --json;
    before the merge of #39's two halves, accept printed them as written."""
    secret = "hf_live_5a0c7e"
    _run_with_metrics(gspo_home, "mine")
    evil = _baseline(tmp_path / "evil.json", preset="tiny", sets=[f"env={{vars: {{HF_TOKEN: {secret}}}}}"])
    for extra in ((), ("--json",)):
        proc = gspo_at("accept", "--baseline", str(evil), "--run", "mine", *extra)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
        assert secret not in proc.stdout + proc.stderr
        assert "<redacted>" in proc.stdout + proc.stderr  # control: the set was shown, its secret hidden

@pytest.mark.slow
def test_accept_with_a_baseline_file_trains_the_users_own_preset_only(tmp_path, gspo_home, gspo_at):
    """The whole flow: the user names the preset; the file's other sets (a foreign runs_dir) never reach the job,
    which writes its run under the user's own $GSPO_HOME."""
    planted = tmp_path / "planted-runs"
    assert gspo_at("prepare-data", "--preset", "tiny", "--local", timeout=600).returncode == 0
    from gspo_cli.accept.service import RECORD_SETS

    evil = _baseline(tmp_path / "evil.json", preset="tiny", sets=[*RECORD_SETS, f"paths.runs_dir={planted}"])
    proc = gspo_at("accept", "--baseline", str(evil), "--preset", "tiny", "--local", "--json", timeout=900)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["sets"] == RECORD_SETS
    assert Path(out["run"]).parent == gspo_home / "runs" and not planted.exists()


def test_the_shipped_baselines_still_name_their_preset(gspo_home, gspo_at):
    """Control: a baseline shipped with gspo is gspo's own: `--list` and its preset's flow are unchanged."""
    proc = gspo_at("accept", "--list", "--json")
    assert proc.returncode == 0, proc.stderr
    upstream = {b["id"]: b for b in json.loads(proc.stdout)["upstream"]}
    assert upstream["run_gspo_qwen3_8b_fsdp2_npu"]["preset"] == "nightly-gspo-qwen3-8b-a2"
    from gspo_cli.accept import service

    job = service.prepare(service.AcceptRequest(baseline="run_gspo_qwen3_8b_fsdp2_npu"))
    assert job.preset == "nightly-gspo-qwen3-8b-a2" and job.not_applied == []


# ---------------------------------------------------------------- finding 4: a run folder is data


def _arith(path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from gspo_cli.data.arith import make_arith_rows

    path.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(make_arith_rows("val", 2, 4, ["+"], 0, "plain")), path / "val.parquet")
    return path / "val.parquet"


def plant_remote_code_run(home: Path, marker: Path, name: str = "zz-handed-over") -> Path:
    """The newest run: its config.yaml turns trust_remote_code on, its checkpoint's config.json has an auto_map
    to a module that writes `marker` when imported."""
    from gspo_cli.config.presets import load_preset
    from gspo_cli.config.schema import to_jsonable
    from gspo_cli.models import builtin

    run = home / "runs" / name
    ckpt = run / "checkpoints" / "global_step_1"
    shutil.copytree(builtin.ensure("tiny"), ckpt)
    config = json.loads((ckpt / "config.json").read_text())
    config["auto_map"] = {"AutoConfig": "payload.PayloadConfig", "AutoModelForCausalLM": "payload.PayloadModel"}
    (ckpt / "config.json").write_text(json.dumps(config))
    (ckpt / "payload.py").write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
                                     "from transformers import PretrainedConfig\n"
                                     "class PayloadConfig(PretrainedConfig):\n    model_type = 'payload'\n")
    preset = to_jsonable(load_preset("tiny"))
    preset["model"]["trust_remote_code"] = True
    preset["env"]["vars"] = {"PLANTED_VAR": "1"}  # unreviewed: loads (a GSPO_* name is refused at load)
    (run / "config.yaml").write_text(yaml.safe_dump(preset))
    (run / "metrics.jsonl").write_text(json.dumps({"step": 1, "data": {R.REWARD: 0.1}}) + "\n")
    return run


@pytest.mark.slow
def test_eval_of_a_planted_run_never_runs_its_models_code(tmp_path, gspo_home, gspo_at):
    """85f9e67: `gspo eval arith --local` (default --model latest) took trust_remote_code from the planted run's
    config.yaml and transformers imported the checkpoint's auto_map module: the marker was written. Now the run's
    own preset is used without it (a note says so) and the marker stays absent; the user's --trust-remote-code
    (the control) is what runs it, with a visible line."""
    marker = tmp_path / "marker"
    plant_remote_code_run(gspo_home, marker)
    data = _arith(tmp_path / "data")
    base = ("eval", "arith", "--local", "--limit", "1", "--max-tokens", "2", "--data", str(data), "--backend", "hf")
    proc = gspo_at(*base, timeout=600)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert not marker.exists()
    assert "sets model.trust_remote_code: True; not taken from a run folder" in proc.stderr
    assert "trust_remote_code: on" not in proc.stderr
    control = gspo_at(*base, "--force", "--trust-remote-code", timeout=600)
    assert "trust_remote_code: on (--trust-remote-code)" in control.stderr
    assert marker.exists()  # the plant is live: the flag, and only the flag, lets it run


def test_a_run_folders_saved_config_never_turns_remote_code_on(tmp_path, gspo_home):
    """The loader's rule, shared by eval's job, `train --resume` and `--preset runs/RUN/config.yaml`: dropped with a
    note; the user's own --set turns it back on; an overrides.verl entry that loads code is refused."""
    from gspo_cli.config import presets
    from gspo_cli.errors import ConfigError

    run = plant_remote_code_run(gspo_home, tmp_path / "marker")
    loaded = presets.load(str(run / "config.yaml"))
    assert loaded.preset.model.trust_remote_code is False and "not taken from a run folder" in loaded.notes[0]
    assert presets.load(str(run / "config.yaml"), ["model.trust_remote_code=true"]).preset.model.trust_remote_code
    copy = tmp_path / "config.yaml"  # the same file outside a run folder is the user's own preset
    copy.write_text((run / "config.yaml").read_text())
    assert presets.load(str(copy)).preset.model.trust_remote_code is True
    data = yaml.safe_load((run / "config.yaml").read_text())
    data["overrides"]["verl"] = [f"+custom_reward_function.path={tmp_path / 'payload.py'}"]
    (run / "config.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="makes verl load code"):
        presets.load(str(run / "config.yaml"))


# ---------------------------------------------------------------- finding 7: one reader, one cleaner

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("where", ["job_state.json", "metrics.jsonl", "eval/arith-1-x/results.json"])
def test_a_deep_json_file_costs_its_run_a_line_not_the_command(where, gspo_home, gspo_at):
    """85f9e67: a 100k-deep JSON in any of these files ended `runs list`, `runs show` and `report` in a
    RecursionError traceback, for every run in the folder."""
    run = _run_with_metrics(gspo_home, "planted")
    good = _run_with_metrics(gspo_home, "good")
    path = run / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(DEEP if where != "metrics.jsonl" else path.read_text() + '{"step": 16, "data": ' + DEEP + "}\n")
    for args in (("runs", "list"), ("runs", "show", "planted"), ("report", "planted"), ("runs", "list", "--json")):
        proc = gspo_at(*args)
        assert "Traceback" not in proc.stderr and proc.returncode == 0, (args, proc.stderr[-2000:])
        if args[1] == "list":
            assert "planted" in proc.stdout and good.name in proc.stdout
        if where != "metrics.jsonl" and (args[0] == "runs" or "eval" in where):  # report reads no job_state
            # (a bad line of metrics.jsonl is skipped as a torn one)
            assert f"warning: skipped {path}: nested deeper than 64 levels" in proc.stderr, proc.stderr


def test_escape_sequences_from_a_run_folder_never_reach_the_terminal(gspo_home, gspo_at):
    """85f9e67 printed a recorded error and a run folder's name as they were: OSC 8 links, a screen clear, a
    title change and C1 controls reached the terminal of `runs list` / `runs show`."""
    run = _run_with_metrics(gspo_home, "plain")
    (run / "job_state.json").write_text(json.dumps({"status": "failed", "error": HOSTILE_TEXT,
                                                    "failure_kind": HOSTILE_TEXT}))
    named = _run_with_metrics(gspo_home, f"run{ESC}]0;title\x07{ESC}[2Jx")
    assert named.is_dir()
    for args in (("runs", "list"), ("runs", "show", "plain"), ("report", "plain")):
        proc = gspo_at(*args, env={"COLUMNS": "200"})
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (args, proc.stderr[-2000:])
        text = proc.stdout + proc.stderr
        assert not [c for c in FORBIDDEN if c in text], (args, repr(text[-2000:]))
    shown = gspo_at("runs", "show", "plain").stdout
    # the text stays, the sequences (a title's text with its OSC) go
    assert "xclick" in shown and "end" in shown and "pwned" not in shown


def test_a_baseline_file_is_read_with_limits_and_printed_clean(tmp_path, gspo_home, gspo_at):
    """85f9e67: a deep baseline JSON gave a RecursionError traceback in `accept`, and its title reached the
    terminal with its escape sequences."""
    _run_with_metrics(gspo_home, "mine")
    deep = tmp_path / "deep.json"
    deep.write_text('{"format": "gspo-accept-baseline/1", "id": "x", "values": ' + DEEP + "}")
    _one_error(gspo_at("accept", "--baseline", str(deep), "--run", "mine"), "nested deeper than 64 levels")
    titled = _baseline(tmp_path / "titled.json", preset="tiny", sets=[], title=HOSTILE_TEXT)
    proc = gspo_at("accept", "--baseline", str(titled), "--run", "mine")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert not [c for c in FORBIDDEN if c in proc.stdout + proc.stderr]
    assert "xclick" in proc.stdout and "end" in proc.stdout


def test_the_cleaner_removes_every_kind_of_sequence():
    """The one sanitiser (gspo_cli/untrusted.py `clean`), sequence by sequence, with its control: the plain text
    around them survives."""
    from gspo_cli.untrusted import clean

    cases = {f"a{ESC}]8;;http://e/{ESC}\\b{ESC}]8;;{ESC}\\c": "abc", f"a{ESC}[2Jb": "ab", f"a{ESC}[38;5;1mb": "ab",
             f"a{ESC}]0;title\x07b": "ab", f"a{ESC}]2;t{ESC}\\b": "ab", f"a{ESC}P+q{ESC}\\b": "ab",
             "a\x9b2Jb": "ab", "a\x9d0;t\x9cb": "ab", "a\x85b\x00c\x7f": "abc", f"a{ESC}cb": "ab",
             "tab\there\nnewline": "tab here newline", "plain [bold]text[/] ok": "plain [bold]text[/] ok"}
    for raw, want in cases.items():
        assert clean(raw) == want, (raw, clean(raw))
    assert clean("two\nlines", newlines=True) == "two\nlines"
