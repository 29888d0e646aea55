"""Issue #39, finding 2: strings compiled for verl are data; `gspo train --dry-run` instantiates nothing of them.

On 85f9e67 (main) both inputs below wrote their marker file during `gspo train --preset P --dry-run` (verl's
schema check composed the overrides and ran `omega_conf_to_dataclass`, which instantiated the `_target_`):

  PYTHONPATH=/work/main GSPO_HOME=$(mktemp -d) python -m gspo_cli train --preset evil-interp.yaml --dry-run
  -> "ok verl schema: verl 0.9.1: Hydra compose + validate_config ok", MARKER written
  (evil-interp.yaml: `trainer.project_name: "${oc.create:{_target_: pathlib.Path.write_text, ...}}"`)
  ... --preset evil-target.yaml --dry-run -> the same, MARKER written
  (evil-target.yaml: `overrides.verl: ["+actor_rollout_ref.rollout.custom={_target_: pathlib.Path.write_text, ...}"]`)

Now both are refused at load with one line (config/verl_strings.py), and the schema check refuses them again on
the compiled overrides and builds only the `_target_`s verl's own config names (engines/verl/schema_check.py).
"""

from __future__ import annotations

import pytest
import yaml

from gspo_cli.config import presets
from gspo_cli.errors import ConfigError

pytestmark = pytest.mark.security


def _write_text(marker) -> str:
    return (f"{{_target_: pathlib.Path.write_text, self: {{_target_: pathlib.Path, _args_: [{marker}]}}, "
            "data: pwned}")


def _err(proc) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error:")]
    assert proc.returncode == 2 and len(errors) == 1, (proc.returncode, proc.stderr[-2000:])
    return errors[0]


def test_interpolation_in_an_ordinary_string_field_runs_nothing(gspo_at, tmp_path):
    marker = tmp_path / "MARKER"
    preset = tmp_path / "evil-interp.yaml"
    preset.write_text(yaml.safe_dump({"extends": "tiny-verl", "name": "evil-interp",
                                      "trainer": {"project_name": "${oc.create:" + _write_text(marker) + "}"}}))
    line = _err(gspo_at("train", "--preset", str(preset), "--dry-run"))
    assert not marker.exists()
    assert "trainer.project_name: '${' starts an OmegaConf interpolation" in line


def test_target_in_overrides_verl_runs_nothing(gspo_at, tmp_path):
    marker = tmp_path / "MARKER"
    preset = tmp_path / "evil-target.yaml"
    preset.write_text(yaml.safe_dump({"extends": "tiny-verl", "name": "evil-target", "overrides": {
        "verl": [f"+actor_rollout_ref.rollout.custom={_write_text(marker)}"]}}))
    line = _err(gspo_at("train", "--preset", str(preset), "--dry-run"))
    assert not marker.exists()
    assert "_target_ is a Hydra instantiation key" in line


@pytest.mark.parametrize("item, says", [
    ("hydra.job.chdir=true", "Hydra's own configuration"),
    ("+hydra/launcher=basic", "Hydra's own configuration"),
    ("+a={_partial_: true}", "_partial_ is a Hydra instantiation key"),
    ("actor_rollout_ref.model.external_lib=evil_module", "external_lib cannot be set"),
    ("custom_reward_function.path=/tmp/evil.py", "custom_reward_function cannot be set"),
    ("data.custom_cls.path=/tmp/evil.py", "custom_cls cannot be set"),
    ("actor_rollout_ref.model.trust_remote_code=true", "trust_remote_code cannot be set"),
    ("trainer.project_name=${oc.env:HOME}", "OmegaConf interpolation"),
])
def test_overrides_verl_refusals(item, says):
    with pytest.raises(ConfigError) as exc:
        presets.load("tiny-verl", [f"overrides.verl={yaml.safe_dump([item], default_flow_style=True).strip()}"])
    assert says in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("sets", [
    ["model.path=${oc.env:HOME}"],
    ["env.vars.HCCL_EXEC_TIMEOUT=${oc.env:HOME}"],
    ["data.arith={ops: ['${x}']}"],
])
def test_interpolation_refused_wherever_it_is(sets):
    with pytest.raises(ConfigError, match="starts an OmegaConf interpolation"):
        presets.load("tiny-verl", sets)


def test_upstream_documentation_may_name_shell_paths():
    """Control: the `upstream` section is documentation (`${HOME}/...` of the upstream script), never compiled."""
    departures = presets.load("qwen3-32b-4x16").preset.upstream.departures
    assert any("${HOME}" in d.upstream for d in departures)


def _compiled_with(tmp_path, extra: str, origin: str):
    from dataclasses import replace

    from gspo_cli.engines.verl.compile import compile_preset, override_key

    preset = presets.load_preset("tiny-verl")
    c = compile_preset(preset, run_dir=tmp_path / "run", train_file=tmp_path / "t.parquet",
                       val_file=tmp_path / "v.parquet")
    return replace(c, overrides=[*c.overrides, extra], origins={**c.origins, override_key(extra): origin})


@pytest.mark.parametrize("origin", ["overrides.verl[0]", "derived: a compiled value"])
def test_schema_check_validates_without_instantiating(tmp_path, gspo_home, monkeypatch, origin):
    """The schema check's own line of defence, on overrides that bypassed the preset schema: nothing written. The
    control switches that line off and the same input writes the marker (the input is live; the guard stops it)."""
    from gspo_cli.engines.verl import schema_check

    marker = tmp_path / "MARKER"
    compiled = _compiled_with(tmp_path, f"+actor_rollout_ref.rollout.custom={_write_text(marker)}", origin)
    with pytest.raises(ConfigError, match="instantiat"):
        schema_check.check(compiled, use_cache=False)
    assert not marker.exists()
    monkeypatch.setattr(schema_check, "_refuse_code", lambda *a: None)
    monkeypatch.setattr(schema_check, "_only_verls_targets", lambda *a: None)
    try:
        schema_check.check(compiled, use_cache=False)
    except ConfigError:
        pass  # verl may reject the stray key after building it: the marker is the evidence
    assert marker.read_text() == "pwned"
