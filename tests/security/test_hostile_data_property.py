"""Issue #39, the property: whatever a handed-over run folder or baseline file holds, gspo reads it as data.

Hypothesis generates hostile run folders and baseline files: JSON nested up to 200,000 deep, lines over the
reader's limit, escape sequences in names, errors and titles, planted `trust_remote_code` / `auto_map`, env and
code-path fields (`env.vars` hooks, `overrides.verl` custom code, `paths.runs_dir`, a base preset named by a path),
symlinks pointing outside (files, and the `report/` and `eval/` folders gspo writes into), FIFOs, bad YAML, JSON of
the wrong types. The real `gspo` then runs `runs list` (text and --json), `runs show`, `report` and
`accept --baseline FILE --run RUN` on them, all in one subprocess per example (gspo_cli.cli.main, as the console
script calls it), and the test shows:

- no command ends in a traceback or an exit code other than 0, 1 (a failed verdict) or 2 (one `Error:` line);
- nothing printed holds an escape sequence or a control character (ESC, BEL, C1);
- no marker file appears (every planted payload would write one), and no file outside the run's own folder is
  touched: a sentinel tree (the symlinks' targets) and a neighbour run keep their bytes, mtimes and listing.

85f9e67 failed the first example that held a deep file (RecursionError tracebacks), printed the escape sequences,
and `report` wrote its charts through a `report -> sentinel` link.

The reader's own property (any bytes -> a value within the depth limit, or BadFile) runs in-process with more
examples: test_the_reader_returns_shallow_data_or_refuses.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from gspo_cli import untrusted  # noqa: E402

pytestmark = pytest.mark.security

REPO = Path(__file__).resolve().parents[2]
CLI_EXAMPLES = 8  # one subprocess (five commands) each
READER_EXAMPLES = 300
ESC = "\x1b"
FORBIDDEN = (ESC, "\x07", "\x9b", "\x9c", "\x9d", "\x90", "\x9e", "\x9f")
SEQUENCES = [f"{ESC}]8;;http://evil.example/{ESC}\\", f"{ESC}[2J", f"{ESC}]0;title\x07", "\x9b31m", "\x9d0;t\x9c",
             f"{ESC}P1$r{ESC}\\", "\x85", "\x00", f"{ESC}[38;5;1m"]
REWARD = "critic/rewards/mean"

# run the real CLI's entry point once per command, in one process: the exit code of each after a marker line
DRIVER = """
import json, sys
from gspo_cli.cli import main
for argv in json.loads(sys.argv[1]):
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    print(f"@@rc {code}", flush=True)
"""

hostile_text = st.lists(st.one_of(st.sampled_from(SEQUENCES), st.text("abc xyz-_.", max_size=6)), max_size=6).map(
    "".join)
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | hostile_text,
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile_text, inner, max_size=3),
                           max_leaves=8)
run_names = hostile_text.map(lambda s: "r" + s.replace("/", "").replace("\x00", "")[:40])


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _planted_config(sentinel: Path, marker: Path) -> str:
    payload = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')"
    return yaml.safe_dump({
        "name": str(sentinel / "preset.yaml"),  # a base preset named by a path outside
        "model": {"path": str(sentinel / "model"), "trust_remote_code": True},
        "trainer": {"engine": "native", "total_training_steps": 3},
        "env": {"vars": {"PYTHONWARNINGS": "ignore::payload.Warning", "BROWSER": payload, "BASH_ENV": payload,
                         "PYTHONPATH": str(sentinel)}},
        "overrides": {"verl": [f"+custom_reward_function.path={sentinel / 'payload.py'}", "+x._target_=os.system"]},
        "paths": {"runs_dir": str(sentinel), "data_dir": str(sentinel)},
    })


def _content(kind: str, draw, sentinel: Path, marker: Path) -> str | tuple[str, Path] | None:
    if kind == "deep":
        return '{"step": 1, "data": ' + _deep(draw(st.integers(65, 200_000))) + "}"
    if kind == "huge_line":
        return '{"step": 1, "data": {"x": "' + "a" * (untrusted.MAX_LINE + 10) + '"}}\n'
    if kind == "escapes":
        return json.dumps({"status": draw(hostile_text), "error": draw(hostile_text), "failure_kind": draw(hostile_text),
                           "step": 1, "data": {draw(hostile_text): 1.0}, "benchmark": draw(hostile_text),
                           "host": draw(hostile_text), "job_id": draw(hostile_text)})
    if kind == "wrong_types":
        return json.dumps(draw(json_values))
    if kind == "bad_yaml":
        return "a: [\n  b: {\n"
    if kind == "planted":
        return _planted_config(sentinel, marker)
    if kind == "symlink_out":
        return ("link", sentinel / "secret.txt")
    if kind == "fifo":
        return ("fifo", sentinel)
    return None


FILE_KINDS = ["deep", "huge_line", "escapes", "wrong_types", "bad_yaml", "planted", "symlink_out", "fifo", "absent"]
RUN_FILES = ["job_state.json", "metrics.jsonl", "config.yaml", "health.jsonl", "verl_job.json",
             "eval/arith-1-abc/results.json", "eval/arith-1-abc/samples.jsonl"]


def _write(path: Path, content) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if content is None:
        return
    if isinstance(content, tuple):
        what, target = content
        if what == "link":
            path.symlink_to(target)
        else:
            os.mkfifo(path)
        return
    path.write_text(content)


def _good_metrics() -> str:
    return "".join(json.dumps({"step": s, "data": {REWARD: 0.5}}) + "\n" for s in range(1, 16))


@st.composite
def hostile_home(draw, root: Path):
    """A $GSPO_HOME/runs with one hostile run (plus a neighbour), a hostile baseline file, the sentinel tree."""
    sentinel, marker = root / "sentinel", root / "marker"
    (sentinel / "model").mkdir(parents=True)
    (sentinel / "secret.txt").write_text("not yours\n")
    (sentinel / "model" / "config.json").write_text('{"auto_map": {"AutoConfig": "payload.X"}}')
    (sentinel / "payload.py").write_text(f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n")
    runs = root / "home" / "runs"
    neighbour = runs / "neighbour"
    neighbour.mkdir(parents=True)
    (neighbour / "metrics.jsonl").write_text(_good_metrics())
    (neighbour / "job_state.json").write_text('{"status": "succeeded"}')
    name = draw(run_names)
    run = runs / name
    run.mkdir()
    _write(run / "metrics.jsonl", _good_metrics())  # a judgeable run, unless a kind below replaces the file
    for rel in RUN_FILES:
        kind = draw(st.sampled_from(FILE_KINDS))
        if kind != "absent":
            (run / rel).unlink(missing_ok=True)
            _write(run / rel, _content(kind, draw, sentinel, marker))
    for folder in ("report", "checkpoints"):  # folders gspo writes into or reads models from, linked outside
        if draw(st.booleans()):
            (run / folder).symlink_to(sentinel, target_is_directory=True)
    baseline = root / "baseline.json"
    kind = draw(st.sampled_from(["deep", "escapes", "wrong_types", "planted", "symlink_out", "fifo", "huge_line"]))
    if kind == "planted":
        content = json.dumps({"format": "gspo-accept-baseline/1", "id": draw(hostile_text), "title": draw(hostile_text),
                              "preset": str(sentinel / "preset.yaml"),
                              "sets": [f"paths.runs_dir={sentinel}", "env.vars.BASH_ENV=" + str(sentinel / "x.sh")],
                              "values": {REWARD: 0.5}, "machine": draw(hostile_text),
                              "rules": [{"metric": draw(hostile_text), "kind": "absolute", "limit": 1}]})
    elif kind == "escapes":
        content = json.dumps({"format": "gspo-accept-baseline/1", "id": draw(hostile_text), "title": draw(hostile_text),
                              "values": {REWARD: 0.5}, "source": {"repo": draw(hostile_text)}})
    else:
        content = _content(kind, draw, sentinel, marker)
    _write(baseline, content)
    return run, neighbour, baseline, sentinel, marker


def _snapshot(*trees: Path) -> dict[str, tuple]:
    out = {}
    for tree in trees:
        for path in sorted(tree.rglob("*")):
            st_ = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else ""
            out[str(path)] = (st_.st_mode, st_.st_size, st_.st_mtime_ns, digest)
    return out


def _run_cli(commands: list[list[str]], home: Path, cwd: Path) -> tuple[list[int], str]:
    env = {**os.environ, "GSPO_HOME": str(home), "COLUMNS": "160",
           "PYTHONPATH": os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p])}
    proc = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(commands)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=600)
    codes = [int(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("@@rc ")]
    return codes, proc.stdout + proc.stderr


@settings(max_examples=CLI_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(data=st.data())
def test_hostile_run_folders_and_baselines_stay_data(data):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        run, neighbour, baseline, sentinel, marker = data.draw(hostile_home(root))
        before = _snapshot(sentinel, neighbour)
        commands = [["runs", "list"], ["runs", "list", "--json"], ["runs", "show", run.name],
                    ["report", run.name], ["accept", "--baseline", str(baseline), "--run", str(run)]]
        codes, output = _run_cli(commands, root / "home", root)
        assert len(codes) == len(commands), output[-4000:]
        assert "Traceback" not in output, output[-4000:]
        assert all(code in (0, 1, 2) for code in codes), (codes, output[-4000:])
        assert not [c for c in FORBIDDEN if c in output], repr(output[-3000:])
        assert not marker.exists()
        assert _snapshot(sentinel, neighbour) == before  # nothing outside the run's own folder was touched


@settings(max_examples=READER_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(depth=st.integers(0, 3000), value=json_values, junk=st.binary(max_size=64), as_line=st.booleans())
def test_the_reader_returns_shallow_data_or_refuses(tmp_path_factory, depth, value, junk, as_line):
    """Any document (deep nesting, junk bytes, escape sequences) read through the one reader is a value no deeper
    than MAX_DEPTH, or BadFile; never a RecursionError. Whatever `clean` returns holds no control character."""
    path = tmp_path_factory.mktemp("reader") / "f.json"
    text = json.dumps(value)
    text = "[" * depth + text + "]" * depth
    path.write_bytes(text.encode() + (junk if junk and not as_line else b""))
    try:
        got = list(untrusted.json_lines(path)) if as_line else [untrusted.read_json(path)]
    except untrusted.BadFile:
        assert depth >= untrusted.MAX_DEPTH - 4 or junk, "a shallow, well-formed document was refused"
        return
    for item in got:
        assert untrusted.depth_of(json.dumps(item)) <= untrusted.MAX_DEPTH
    cleaned = untrusted.clean(json.dumps(value, ensure_ascii=False))
    assert not [c for c in cleaned if ord(c) < 32 or 0x7F <= ord(c) <= 0x9F]
