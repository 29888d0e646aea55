"""Issue #39, findings 1 and 8: one rule for the environment variables a preset may give a job.

On 85f9e67 (main) a preset's `env.vars` could name any variable: `gspo env exports` printed `export
PYTHONWARNINGS=...`, `export BROWSER=...`, `export PROMPT_COMMAND=...`, `export RAY_ADDRESS=...`,
`export GSPO_FAULT=...`, `export GSPO_SECRETS_FILE=...` (exit 0), and after the README's `eval` the next Python
start imported the module PYTHONWARNINGS names, which ran BROWSER (the marker file below appeared); the same
names in a run's saved config.yaml loaded on `gspo train --resume`; and `overrides.verl` carried
`+ray_kwargs.ray_init.runtime_env.env_vars.GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS=1` into a compiled job ("verl schema
ok"). Now each is refused at load with one line naming the variable and why (config/env_rule.py), and a name
outside the reviewed families is shown as a warning in the dry-run and the exports header.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gspo_cli.config import env_rule, presets
from gspo_cli.config.schema import Preset, to_jsonable
from gspo_cli.errors import ConfigError

pytestmark = pytest.mark.security
REPO = Path(__file__).resolve().parents[2]

# Each refused family of the rule, by a name the red team used or a sibling of one.
REFUSED = ["PROMPT_COMMAND", "BASH_ENV", "ENV", "PS1", "PS4", "SHELLOPTS", "IFS", "LD_PRELOAD", "LD_LIBRARY_PATH",
           "PYTHONWARNINGS", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONINSPECT", "PYTHONBREAKPOINT",
           "BROWSER", "PERL5OPT", "NODE_OPTIONS", "GSPO_FAULT", "GSPO_REWARD_FAULT", "GSPO_SECRETS_FILE",
           "GSPO_FAULTS_TO_JOBS", "GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS", "RAY_ADDRESS", "RAY_AUTH_TOKEN_PATH",
           "RAY_AUTH_MODE", "RAY_JOB_HEADERS", "ASCEND_OPP_PATH", "NCCL_NET_PLUGIN", "VERL_USE_EXTERNAL_MODULES",
           "prompt_command", "Path"]
# Every variable the shipped presets and the upstream scripts set, and the families the rule names.
ALLOWED = ["HCCL_EXEC_TIMEOUT", "HCCL_CONNECT_TIMEOUT", "HCCL_ASYNC_ERROR_HANDLING", "HCCL_OP_EXPANSION_MODE",
           "HCCL_BUFFSIZE", "TASK_QUEUE_ENABLE", "CPU_AFFINITY_CONF", "VLLM_USE_V1", "VLLM_ATTENTION_BACKEND",
           "VLLM_ASCEND_ENABLE_FLASHCOMM", "VLLM_ASCEND_ENABLE_PREFETCH_MLP", "VLLM_ASCEND_ENABLE_DENSE_OPTIMIZE",
           "HYDRA_FULL_ERROR", "RAY_DEDUP_LOGS", "PYTHONUNBUFFERED", "MULTI_STREAM_MEMORY_REUSE",
           "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES", "NCCL_DEBUG",
           "TORCH_NCCL_ASYNC_ERROR_HANDLING", "PYTORCH_NPU_ALLOC_CONF", "OMP_NUM_THREADS", "HF_HOME", "HF_TOKEN",
           "HUGGINGFACE_HUB_CACHE", "TOKENIZERS_PARALLELISM", "WANDB_API_KEY", "GLOO_SOCKET_IFNAME"]


def _err(proc) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error:")]
    assert proc.returncode != 0 and len(errors) == 1, (proc.returncode, proc.stderr[-2000:])
    return errors[0]


@pytest.mark.parametrize("name", REFUSED)
def test_refused_names_on_the_schema_door(name):
    with pytest.raises(ConfigError) as exc:
        presets.load("tiny-verl", [f"env.vars.{name}=x"])
    assert f"{name} cannot be set by a preset" in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("name", ALLOWED)
def test_allowed_names_pass_silently(name):
    assert env_rule.judge(name).kind == env_rule.ALLOWED, env_rule.judge(name)
    assert presets.load("tiny-verl", [f"env.vars.{name}='1'"]).preset.env.vars[name] == "1"


def test_shipped_presets_set_only_reviewed_names():
    for name in presets.available_names():
        loaded = presets.load(name)
        assert not env_rule.unreviewed(loaded.preset.env.vars), (name, loaded.preset.env.vars)


def test_the_rule_is_consistent():
    """No name is both an allowed family and refused unless refusals are narrower (ASCEND paths inside ASCEND_*)
    or the allowance is an exact name (PYTHONUNBUFFERED inside PYTHON*); every entry has its source or reason."""
    for pattern, why in (*env_rule.ALLOWED_NAMES, *env_rule.REFUSED_NAMES):
        assert why.strip() and pattern == pattern.strip()
    assert env_rule.judge("PYTHONUNBUFFERED").kind == env_rule.ALLOWED
    assert env_rule.judge("PYTHONUNBUFFERED_X").kind == env_rule.REFUSED  # only the exact name is allowed
    assert env_rule.judge("ASCEND_OPP_PATH").kind == env_rule.REFUSED
    assert env_rule.judge("SOME_NEW_SWITCH").kind == env_rule.UNREVIEWED
    assert env_rule.judge("HF_ENDPOINT").kind == env_rule.UNREVIEWED  # sends the hub token elsewhere: shown


def test_payload_exports_run_nothing_after_eval(gspo_at, tmp_path):
    """The red team's PYTHONWARNINGS + BROWSER pair and the shell hooks, through the README's `eval`. On 85f9e67
    gspo exited 0, the eval exported them, and the next `python3 -c pass` imported `antigravity`, which ran
    BROWSER: the marker file appeared. Now gspo exits 2 with one line and nothing is exported."""
    marker, hook = tmp_path / "MARKER", tmp_path / "hook.sh"
    hook.write_text(f"touch {shlex.quote(str(marker))}\n")
    preset = tmp_path / "evil.yaml"
    preset.write_text(yaml.safe_dump({"extends": "tiny-verl", "name": "evil", "env": {"vars": {
        "PYTHONWARNINGS": "ignore::antigravity.Warning", "BROWSER": f"touch {marker}",
        "BASH_ENV": str(hook), "PROMPT_COMMAND": f"touch {marker}"}}}))
    script = (f"out=$({shlex.quote(sys.executable)} -m gspo_cli env exports --preset {shlex.quote(str(preset))}); "
              "rc=$?; eval \"$out\"; python3 -c pass 2>/dev/null; bash -c true; exit $rc")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO), "BROWSER": ""})
    assert not marker.exists()
    line = _err(proc)
    assert "cannot be set by a preset" in line
    assert all(n in line for n in ("PYTHONWARNINGS", "BROWSER", "BASH_ENV", "PROMPT_COMMAND"))
    assert "export" not in proc.stdout


@pytest.mark.parametrize("form", [
    "env.vars.RAY_ADDRESS=10.9.9.9:6379",
    "env={vars: {RAY_ADDRESS: '10.9.9.9:6379'}}",
    "env.vars={RAY_ADDRESS: '10.9.9.9:6379'}",
])
def test_every_set_form_is_refused_on_the_cli(gspo_at, form):
    """On 85f9e67 each form loaded and the dry-run compiled RAY_ADDRESS into the job's runtime_env."""
    line = _err(gspo_at("train", "--preset", "tiny-verl", "--dry-run", "--set", form))
    assert "RAY_ADDRESS cannot be set by a preset" in line and "Ray connection" in line


def test_a_saved_run_config_is_refused_on_resume(gspo_at, tmp_path):
    """A handed-over run whose config.yaml names PYTHONWARNINGS + BROWSER: on 85f9e67 `gspo train --resume` loaded
    it into the job's environment; now it is one line."""
    home = tmp_path / "home"
    run = home / "runs" / "tiny-verl-20260101-000000"
    (run / "checkpoints" / "global_step_4").mkdir(parents=True)
    (run / "checkpoints" / "latest_checkpointed_iteration.txt").write_text("4")
    saved = to_jsonable(presets.load_preset("tiny-verl"))
    saved["env"]["vars"].update({"PYTHONWARNINGS": "ignore::antigravity.Warning", "BROWSER": "touch /tmp/x"})
    (run / "config.yaml").write_text(yaml.safe_dump(saved))
    line = _err(gspo_at("train", "--resume", run.name, "--dry-run", env={"GSPO_HOME": str(home)}))
    assert "config.yaml" in line and "BROWSER cannot be set by a preset" in line and "PYTHONWARNINGS" in line


@pytest.mark.parametrize("item", [
    "+ray_kwargs.ray_init.runtime_env.env_vars.GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS=1",
    "+ray_kwargs={ray_init: {runtime_env: {env_vars: {GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS: '1'}}}}",
    "+ray_kwargs.ray_init.runtime_env.py_executable='sh -c id'",
])
def test_test_switches_unreachable_through_overrides_verl(gspo_at, tmp_path, item):
    """Finding 8: on 85f9e67 the first entry compiled ("verl schema: ... ok", exit by the data check only) and the
    job's Ray runtime_env would carry the test switch. Now the entry is refused at load."""
    preset = tmp_path / "p.yaml"
    preset.write_text(yaml.safe_dump({"extends": "tiny-verl", "name": "p", "overrides": {"verl": [item]}}))
    line = _err(gspo_at("train", "--preset", str(preset), "--dry-run"))
    assert "runtime_env cannot be set through overrides.verl" in line


def test_unreviewed_names_are_shown_in_the_dry_run_and_the_exports_header(gspo_at, tmp_path):
    """On 85f9e67 an unknown variable passed without a word ("0 warnings")."""
    proc = gspo_at("env", "exports", "--preset", "tiny-verl", "--set", "env.vars.MY_SWITCH=enabled")
    assert proc.returncode == 0, proc.stderr
    head = proc.stdout.splitlines()[:3]
    assert any(ln.startswith("# warning: MY_SWITCH is unreviewed") for ln in head), head
    proc = gspo_at("train", "--preset", "tiny-verl", "--dry-run", "--json", "--set", "env.vars.MY_SWITCH=enabled",
                   timeout=600)
    import json

    checks = json.loads(proc.stdout)["preflight"]["checks"]
    assert [c for c in checks if c["name"] == "env.vars" and c["status"] == "warn" and "MY_SWITCH" in c["message"]]


def test_the_job_env_builder_is_a_second_door():
    """A preset built without the schema (model_construct) still cannot get a refused name into a job's env."""
    from gspo_cli.env import exports

    good = presets.load_preset("tiny-verl")
    env = good.env.model_copy(update={"vars": {"GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS": "1"}})
    bad = Preset.model_construct(**{**dict(good), "env": env})
    with pytest.raises(ConfigError, match="GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS cannot be set by a preset"):
        exports.job_vars(bad)
    assert "GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS" not in exports.job_vars(good)  # control: the good preset builds


def test_docs_table_lists_every_entry_of_the_rule():
    """docs/security.md's table is the rule's: every name or family of the module is in it (one fact, one place:
    the module; the docs follow it)."""
    doc = (REPO / "docs" / "security.md").read_text(encoding="utf-8")
    table = doc[doc.index("## The env-var rule"):]
    for pattern, _ in (*env_rule.ALLOWED_NAMES, *env_rule.REFUSED_NAMES, *env_rule.SHOWN_NAMES):
        assert f"`{pattern}`" in table, pattern
