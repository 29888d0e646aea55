"""Issue #39, left over: the verl job wrapper applied `env_vars` from its run folder's verl_job.json unchecked, so
whoever could write the run folder between `gspo train`'s write and the job's start could plant variables
(PROMPT_COMMAND, LD_PRELOAD, a GSPO_TEST_* switch) in every process of the job. The job now checks them with the
one env rule, allowing beyond it only what gspo itself sets (compile.own_env), with gspo's own value.

On e0ecdb8 `job.checked_env` did not exist and job_main passed the planted names on: every test below fails there
(no `job.checked_env`: AttributeError)."""

from __future__ import annotations

import json

import pytest

from gspo_cli.engines.verl import job
from gspo_cli.errors import ConfigError

pytestmark = pytest.mark.security


@pytest.fixture(scope="module")
def _written(tmp_path_factory):
    """tiny-verl's verl_job.json as `gspo train` writes it (real compile, real writer; no schema check, no Ray),
    once per module (compiling builds the tiny model); its device is cpu, so the CPU switches' variables are in it."""
    from gspo_cli.engines.verl import launch

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GSPO_HOME", str(tmp_path_factory.mktemp("gspo-home")))
        mp.delenv("RAY_ADDRESS", raising=False)
        spec = launch.write_run(launch.make_plan("tiny-verl", [], schema=False))
    return spec, spec.read_text()


@pytest.fixture
def real_job_file(_written):
    spec, text = _written
    spec.write_text(text)  # each test starts from gspo's own file
    return spec


def test_gspo_s_own_job_file_passes(real_job_file):
    """Control: everything gspo writes passes, the refused-by-the-rule names it sets itself included."""
    spec = json.loads(real_job_file.read_text())
    env = job.checked_env(spec, real_job_file.resolve())
    assert env == spec["env_vars"]
    assert {"VERL_FILE_LOGGER_PATH", "VERL_USE_EXTERNAL_MODULES", "GSPO_VLLM_CPU_RELOADABLE_WEIGHTS"} <= set(env)


PLANTED = {"PROMPT_COMMAND": "touch /tmp/pwned-a", "LD_PRELOAD": "/tmp/pwned-b.so",
           "GSPO_TEST_FREEZE_ROLLOUT_WEIGHTS": "pwned-c", "PYTHONWARNINGS": "pwned-d", "RAY_ADDRESS": "10.0.0.9:6379"}


def test_a_planted_variable_is_refused_naming_it_and_the_file(real_job_file):
    """Each planted name alone (one rewrite of the real file each): one line naming it and the file."""
    original = json.loads(real_job_file.read_text())
    for name, value in PLANTED.items():
        real_job_file.write_text(json.dumps({**original, "env_vars": {**original["env_vars"], name: value}}))
        with pytest.raises(ConfigError) as caught:
            job.checked_env(json.loads(real_job_file.read_text()), real_job_file.resolve())
        message = caught.value.message
        assert "\n" not in message and f"env_vars.{name} is refused" in message, message
        assert str(real_job_file.resolve()) in message
        assert value not in message  # a value may be a secret: never echoed


def test_gspo_s_own_names_with_another_value_are_refused(real_job_file):
    """The allowance is gspo's own value, not the name: a planted plugin module or a metrics path outside the run
    folder (verl's logger would write there) is refused."""
    spec = json.loads(real_job_file.read_text())
    for name, value in (("VERL_USE_EXTERNAL_MODULES", "evil_module"), ("VERL_FILE_LOGGER_PATH", "/tmp/x.jsonl")):
        planted = {**spec, "env_vars": {**spec["env_vars"], name: value}}
        with pytest.raises(ConfigError, match=f"env_vars.{name} is refused: gspo sets {name} itself"):
            job.checked_env(planted, real_job_file.resolve())


def test_the_job_entry_fails_on_a_planted_file_before_starting_verl(real_job_file, capsys):
    """job_main itself: one error, nothing started (the check runs before the wrapper)."""
    spec = json.loads(real_job_file.read_text())
    spec["env_vars"]["BASH_ENV"] = "/tmp/x.sh"
    spec["trainer_command"] = ["false"]
    real_job_file.write_text(json.dumps(spec))
    with pytest.raises(ConfigError, match="env_vars.BASH_ENV is refused"):
        job.job_main([str(real_job_file)])
    assert "starting verl" not in capsys.readouterr().out
