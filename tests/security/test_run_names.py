"""`gspo runs rm/show`, `report` and both engines act on runs only: hostile names and paths touch nothing."""

from __future__ import annotations

import os

import pytest
import yaml

from gspo_cli import layout
from gspo_cli.errors import ConfigError
from gspo_cli.runs import names

pytestmark = pytest.mark.security


def _run(root, name):
    run = root / name
    run.mkdir(parents=True)
    (run / "config.yaml").write_text(yaml.safe_dump({"name": "tiny", "trainer": {"engine": "native"}}))
    (run / "metrics.jsonl").write_text('{"step": 1, "data": {}}\n')
    return run


@pytest.fixture
def world(gspo_home, tmp_path):
    """A real run, a victim folder outside runs/ that looks like a run, links pointing out, a non-run folder."""
    runs = layout.runs_dir()
    real = _run(runs, "real")
    victim = _run(tmp_path / "victim-parent", "victim")  # outside runs/, even with a run's marker
    (runs / "escape-link").symlink_to(victim)
    (runs / "notarun").mkdir()
    (runs / "notarun" / "keep.txt").write_text("x")
    (runs / "fake-config").mkdir()
    (runs / "fake-config" / "config.yaml").write_text("just: text\n")  # not a config gspo wrote
    cwd = tmp_path / "two" / "deep"  # as in the report: a working directory two levels deep
    cwd.mkdir(parents=True)
    return {"runs": runs, "real": real, "victim": victim, "cwd": cwd, "home": gspo_home}


def _snapshot(*roots):
    return {p: sorted(os.listdir(p)) for r in roots for p in [r] + [q for q in r.rglob("*") if q.is_dir()]}


HOSTILE = [
    ("..", "outside the runs folder"),
    ("../..", "outside the runs folder"),
    ("../../victim", "no run folder"),
    ("../../victim-parent/victim", "outside the runs folder"),
    ("{victim}", "outside the runs folder"),
    ("{home}", "outside the runs folder"),
    ("/etc", "outside the runs folder"),
    ("escape-link", "outside the runs folder"),
    ("{runs}/escape-link", "outside the runs folder"),
    ("notarun", "is not a run"),
    ("fake-config", "is not a run"),
    ("{runs}", "outside the runs folder"),
    (".", "outside the runs folder"),
    ("~", "outside the runs folder"),
    ("real/..", "no run folder"),
    ("{runs}/real/..", "outside the runs folder"),
    ("nope", "no run 'nope'"),
]


@pytest.mark.parametrize("form,expected", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_runs_rm_refuses_hostile_forms_and_removes_nothing(world, gspo_at, form, expected):
    ref = form.format(**{k: str(v) for k, v in world.items()})
    before = _snapshot(world["runs"], world["victim"].parent)
    proc = gspo_at("runs", "rm", "--yes", ref, cwd=world["cwd"])
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert expected in proc.stderr and "Traceback" not in proc.stderr
    assert len([ln for ln in proc.stderr.splitlines() if ln.startswith("Error")]) == 1, proc.stderr
    assert _snapshot(world["runs"], world["victim"].parent) == before
    shown = gspo_at("runs", "show", ref, cwd=world["cwd"])
    assert shown.returncode == 2 and expected in shown.stderr


def test_a_real_run_by_name_and_by_path_inside_runs(world, gspo_at):
    assert gspo_at("runs", "show", "real").returncode == 0
    assert names.existing_run(str(world["real"])) == world["real"].resolve()
    inner = world["real"] / "deep"
    inner.mkdir()
    proc = gspo_at("runs", "rm", "--yes", "..", cwd=inner)  # `..` of runs/real/deep is the run runs/real itself
    assert proc.returncode == 0 and not world["real"].exists()
    assert world["victim"].is_dir()


@pytest.mark.parametrize("name", ["../escape", "/tmp/abs-run", "a/b", "..", ".hidden", "x..y", "", "a\\b"])
def test_both_engines_refuse_a_run_name_outside_runs(gspo_home, name):
    with pytest.raises(ConfigError, match="bad run name"):
        names.run_dir_for(name)
    from gspo_cli.config.presets import load_preset
    from gspo_cli.engines.native.launch import run_name_for
    from gspo_cli.engines.verl.launch import _load_run

    class Req:
        run_name = name
        preset = load_preset("tiny")

    if name:  # an empty --run-name falls back to the preset's name, as documented
        with pytest.raises(ConfigError, match="bad run name"):
            run_name_for(Req)
        with pytest.raises(ConfigError, match="bad run name"):
            _load_run("qwen3-0.6b-1x1", [], name, None)


@pytest.mark.parametrize("name", ["../escape", "/tmp/abs-escape"])
def test_verl_dry_run_refuses_escape_in_one_line(gspo_at, gspo_home, name):
    proc = gspo_at("train", "--preset", "qwen3-0.6b-1x1", "--run-name", name, "--dry-run")
    assert proc.returncode == 2 and f"bad run name {name!r}" in proc.stderr and "Traceback" not in proc.stderr
