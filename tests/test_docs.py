"""The docs stay true: the presets reference lists every schema key, README and quickstart commands exist with
the flags they show, the quickstart block runs as written, and the README file tree names every folder."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_presets_reference_matches_the_schema():
    spec = importlib.util.spec_from_file_location("gen", REPO / "docs" / "gen_presets_reference.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    from gspo_cli.config.schema import Preset

    text = (REPO / "docs" / "presets.md").read_text()
    table = text.split("<!-- keys:begin -->")[1].split("<!-- keys:end -->")[0]
    assert [ln for ln in table.strip().splitlines()[2:]] == gen.rows(Preset), (
        "docs/presets.md is out of date: run .venv/bin/python docs/gen_presets_reference.py and paste the table"
    )


def test_readme_names_the_two_commands_and_makefile_has_them():
    readme = (REPO / "README.md").read_text()
    makefile = (REPO / "Makefile").read_text()
    for target in ("demo", "test"):
        assert f"make {target}" in readme
        assert re.search(rf"^{target}:", makefile, re.M), target
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_builtin_presets_table_lists_every_builtin():
    from gspo_cli.config import presets

    text = (REPO / "docs" / "presets.md").read_text()
    for source in presets.builtin_sources():
        assert f"`{source.name}`" in text, source.name


# ------------------------------------------------------------------ the command blocks of README and quickstart


DOCS_WITH_COMMANDS = ("README.md", "docs/quickstart.md")


def command_lines(doc: str) -> list[str]:
    """Every `gspo ...` command in the doc's ```bash blocks, comments and `eval "$(...)"` wrappers removed."""
    text = (REPO / doc).read_text()
    found = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = re.sub(r"\s+#\s.*$", "", line).strip()
            m = re.search(r"(?:^|\$\()(gspo\s[^)]*)", line)
            if m:
                found.append(m.group(1).strip().rstrip('"'))
    return found


def _check_command(root, line: str) -> None:
    import shlex

    words = [w for w in shlex.split(line)[1:] if not (w.startswith("<") or "<" in w and ">" in w)]
    cmd, ctx_path = root, ["gspo"]
    while words and hasattr(cmd, "commands") and words[0] in cmd.commands:  # typer vendors click
        cmd = cmd.commands[words[0]]
        ctx_path.append(words.pop(0))
    assert not hasattr(cmd, "commands"), f"{line!r}: {' '.join(ctx_path)} needs a subcommand"
    flags = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")}
    for word in words:
        if word.startswith("-"):
            assert word.split("=")[0] in flags, f"{line!r}: {' '.join(ctx_path)} has no option {word}"


def test_every_documented_command_and_flag_exists():
    import typer

    from gspo_cli.cli import app

    root = typer.main.get_command(app)
    for doc in DOCS_WITH_COMMANDS:
        lines = command_lines(doc)
        assert len(lines) >= 5, doc
        for line in lines:
            _check_command(root, line)


def test_readme_file_tree_names_every_folder_gspo_writes_under_home():
    tree = (REPO / "README.md").read_text().split("## Where files go")[1].split("## Docs")[0]
    written = set()
    for path in (REPO / "gspo_cli").rglob("*.py"):
        written |= set(re.findall(r'gspo_home\(\)\s*/\s*"([a-z][\w-]*)"', path.read_text()))
    for folder in ("runs", "data", "presets", "ray"):  # through layout helpers
        written.add(folder)
    missing = [f for f in sorted(written) if not re.search(rf"^{re.escape(f)}/", tree, re.M)]
    assert not missing, f"README's file tree misses {missing}"
    for name in ("runs/<run>/report/", "models/", "cache/verl-check/"):
        assert name in tree


@pytest.mark.ray
def test_quickstart_tiny_block_runs_as_written(gspo_home, ray_head, gspo):
    """The quickstart's by-hand block, verbatim through a real Ray head; only training is shortened (4 steps, a
    checkpoint and a validation every 2: two checkpoints for `eval ...:all`, the report and `runs list`)."""
    block = [line for line in command_lines("docs/quickstart.md")
             if line.split()[1] in ("prepare-data", "train", "eval", "report", "runs")][:5]
    assert [line.split()[1] for line in block] == ["prepare-data", "train", "eval", "report", "runs"]
    env = {"RAY_ADDRESS": ray_head.dashboard_url}
    for line in block:
        args = line.split()[1:]
        if args[0] == "train":
            args += ["--set", "trainer.total_training_steps=4", "--set", "trainer.save_freq=2",
                     "--set", "trainer.test_freq=2"]
        proc = gspo(*args, env=env, timeout=600)
        assert proc.returncode == 0, (line, proc.stderr[-2000:])
    documented = re.search(r"in (runs/[\w-]+/report/)", (REPO / "docs/quickstart.md").read_text())[1]
    assert (gspo_home / documented / "summary.md").is_file()
    assert (gspo_home / documented / "eval_accuracy.png").is_file()  # the eval of every checkpoint, charted
    evals = sorted(p.name for p in (gspo_home / "runs" / "tiny-demo" / "eval").iterdir())
    assert [re.sub(r"-[0-9a-f]{8}$", "", name) for name in evals] == ["arith-2", "arith-4"]  # + settings digest
    assert "tiny-demo" in proc.stdout and "finished" in proc.stdout  # gspo runs list


def test_make_demo_runs_the_quickstart_block():
    """make demo and the quickstart's by-hand block are the same commands (make demo only names the run)."""
    demo = (REPO / "Makefile").read_text().split("\ndemo:")[1].split("\n\n")[0]
    make_cmds = [re.sub(r"\s+", " ", ln.strip().replace("$(GSPO)", "gspo").replace("$(DEMO_RUN)", "tiny-demo"))
                 for ln in demo.splitlines() if ln.strip().startswith("$(GSPO)")]
    block = [re.sub(r"\s+", " ", c) for c in command_lines("docs/quickstart.md")][:len(make_cmds)]
    assert make_cmds == block


def test_make_demo_lists_checkpoints_in_step_order(tmp_path):
    """Issue 44: the demo's summary listed checkpoints (and eval folders) in text order (global_step_100 before
    global_step_50)."""
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    steps = [500, 5, 100, 50]
    for step in steps:
        (tmp_path / "runs" / "demo-x" / "checkpoints" / f"global_step_{step}").mkdir(parents=True)
        (tmp_path / "runs" / "demo-x" / "eval" / f"arith-{step}-91238a14").mkdir(parents=True)
    proc = subprocess.run(["make", "-s", "-C", str(REPO), "demo-summary", "DEMO_RUN=demo-x"], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "GSPO_HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    (line,) = [ln for ln in proc.stdout.splitlines() if "checkpoints (HF folders)" in ln]
    assert re.findall(r"global_step_(\d+)", line) == [str(s) for s in sorted(steps)]
    (evals,) = [ln for ln in proc.stdout.splitlines() if "eval results" in ln]
    assert re.findall(r"arith-(\d+)-", evals) == [str(s) for s in sorted(steps)]
