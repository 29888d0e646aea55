"""Built-in presets ship inside the wheel: a non-editable install, away from the source tree, finds them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_non_editable_install_finds_builtin_presets(tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--target",
         str(target), str(REPO)],
        check=True, capture_output=True, text=True, timeout=300,
    )
    # presets/ at the repository root ships as the data package gspo_cli.builtin_presets (setup.py)
    assert (target / "gspo_cli" / "builtin_presets" / "qwen3-32b-4x16.yaml").is_file()
    # the upstream acceptance baselines ship as package data (gspo_cli/**/*.json)
    assert (target / "gspo_cli" / "accept" / "baselines" / "run_gspo_qwen3_8b_fsdp2_npu.json").is_file()
    code = (
        "import json, gspo_cli, gspo_cli.config.catalog as c, gspo_cli.accept.baselines as b; "
        "print(json.dumps({'file': gspo_cli.__file__, 'names': [r['name'] for r in c.catalog()], "
        "'baselines': [x.id for x in b.shipped()]}))"
    )
    env = dict(os.environ, PYTHONPATH=str(target), GSPO_HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60, check=True)
    info = json.loads(proc.stdout)
    assert info["file"].startswith(str(target)), "imported the source tree, not the installed copy"
    assert {"qwen3-32b-4x16", "tiny", "nightly-gspo-qwen3-8b-a2"} <= set(info["names"])
    assert info["baselines"] == ["run_gspo_qwen3_30b_megatron_npu", "run_gspo_qwen3_8b_fsdp2_npu"]


def test_wheel_builds_without_setuptools_warnings_and_holds_the_data(tmp_path):
    """Issue 44: `make install` printed ~40 lines of setuptools' "Package would be ignored" for the data-only folder
    gspo_cli/accept/baselines (no __init__.py). It is a package in setup.py now; the wheel still holds its files."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), str(REPO)],
        capture_output=True, text=True, timeout=300, check=True,
    )
    out = proc.stdout + proc.stderr
    assert "would be ignored" not in out and "absent from setuptools' `packages`" not in out, out
    import zipfile

    (wheel,) = tmp_path.glob("gspo-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"gspo_cli/accept/baselines/{p.name}" for p in (REPO / "gspo_cli/accept/baselines").glob("*.json")}
    presets = {f"gspo_cli/builtin_presets/{p.name}" for p in (REPO / "presets").glob("*.yaml")}
    assert len(shipped) >= 2 and shipped <= names and presets <= names
    data = {str(p.relative_to(REPO)) for p in (REPO / "gspo_cli").rglob("*") if p.suffix in (".json", ".jinja")}
    assert data <= names  # every data file under gspo_cli, not only the baselines
