"""Preset YAML is read with limits, and a file that is not a preset is never echoed (issue #36, finding 5 and the
`extends: /etc/shadow` part of finding 6).

On 1ea5a4f a 471-byte preset of nested aliases grew `gspo presets show` past 2.4 GB in 30 s (every alias is
expanded); a self-referencing alias, a 20,000-deep list and `--set description=` followed by 5,000 `[` ended in a
RecursionError traceback; `extends: /etc/shadow` printed that file's first line in the error. Each is now one
`Error:` line (exit 2) within the limits of gspo_cli/config/yaml_limits.py. A run folder's config.yaml (read by
`gspo runs list`) gets the same limits.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.security


def _bomb(levels: int = 9) -> str:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\nname: bomb\n"


MEMORY = 3 << 30  # the gspo child's address space: a bomb that expands fails there instead of filling the host


def _one_line(proc, says: str):
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr, proc.stderr[-2000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1 and says in errors[0], proc.stderr[-2000:]


CASES = {
    "nested aliases (471 bytes)": (_bomb(), "expands to more than 100000 values"),
    "self-referencing alias": ("name: selfref\ndescription: &x [*x]\n", "a YAML alias refers to a node that contains it"),
    "20,000-deep list": ("name: deep\ndescription: " + "[" * 20000 + "]" * 20000 + "\n", "nested deeper than 64"),
    "20,000-deep mapping": ("name: deep\ndescription: " + "{a: " * 20000 + "1" + "}" * 20000 + "\n",
                            "nested deeper than 64"),
    "2 MB of YAML": ("name: big\ndescription: '" + "x" * (2 << 20) + "'\n", "gspo reads at most 1048576 bytes"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_preset_files_are_one_line(case, tmp_path, gspo_at):
    text, says = CASES[case]
    path = tmp_path / "hostile.yaml"
    path.write_text(text)
    proc = gspo_at("presets", "show", str(path), timeout=300, max_memory=MEMORY)
    _one_line(proc, says)


def test_set_with_5000_brackets_is_one_line(gspo_at):
    proc = gspo_at("presets", "show", "tiny", "--set", "description=" + "[" * 5000)
    _one_line(proc, "nested deeper than 64")
    assert "[" * 100 not in proc.stderr  # the value is shortened in the message


def test_extends_of_a_file_that_is_not_a_preset_never_echoes_it(tmp_path, gspo_home, gspo_at):
    shadow = tmp_path / "shadow"  # like /etc/shadow: no .yaml suffix, one `user:hash:...` line per user
    shadow.write_text("root:$6$s3cr3tsalt$hashhashhash:20228:0:99999:7:::\ndaemon:*:20228:0:99999:7:::\n")
    preset = gspo_home / "presets" / "p.yaml"
    preset.parent.mkdir(parents=True)
    preset.write_text(f"name: p\nextends: {shadow}\n")
    proc = gspo_at("presets", "show", "p")
    _one_line(proc, "not a preset: name a preset or a .yaml file")
    assert "s3cr3t" not in proc.stderr + proc.stdout and "root:" not in proc.stderr + proc.stdout
    # /etc/shadow itself, if it is there (root can read it): the same line
    preset.write_text("name: p\nextends: /etc/shadow\n")
    proc = gspo_at("presets", "show", "p")
    _one_line(proc, "not a preset")
    # named with --preset by the user: still no line of it in the error
    proc = gspo_at("presets", "show", str(shadow))
    assert proc.returncode == 2 and "s3cr3t" not in proc.stderr and "hashhash" not in proc.stderr, proc.stderr
    # a .yaml file that is not a preset: its keys are named only when they look like keys
    leak = tmp_path / "leak.yaml"
    leak.write_text("'root:$6$s3cr3tsalt$hashhashhash': 1\n")
    proc = gspo_at("presets", "show", str(leak))
    assert proc.returncode == 2 and "s3cr3t" not in proc.stderr and "<a key that is not a name>" in proc.stderr


def test_runs_show_reads_a_run_folders_config_with_the_same_limits(gspo_home, gspo_at):
    """A handed-over run whose config.yaml is the alias bomb (named after a real preset, so `runs show` diffs it):
    on 1ea5a4f `runs show` expanded every alias (past 1 GB, still printing after 60 s)."""
    run = gspo_home / "runs" / "handed-over"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text(_bomb().replace("name: bomb", "name: tiny") + "trainer: {engine: native}\n")
    (run / "job_state.json").write_text('{"status": "succeeded"}')
    for args in (["runs", "show", "handed-over"], ["runs", "list", "--json"]):
        proc = gspo_at(*args, timeout=120, max_memory=MEMORY)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
        assert "handed-over" in proc.stdout and len(proc.stdout) < 20_000
