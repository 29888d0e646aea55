"""The engine registry (config/engine_registry.py) is the one table of engines: every entry resolves to an
implementation of the one launcher protocol, and every use of an engine name (the schema's `trainer.engine`, the
specs, the planner's hooks, the job kinds) answers from it; an unknown name is one ConfigError naming the known."""

from __future__ import annotations

import inspect
import typing
from pathlib import Path

import pytest

from gspo_cli import job_kinds
from gspo_cli.config.engine_registry import ENGINES as ENTRIES
from gspo_cli.config.engine_registry import engine_of
from gspo_cli.config.presets import load_preset
from gspo_cli.engines import ENGINES, TrainRequest, get_engine, spec_for
from gspo_cli.errors import ConfigError, GspoError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_every_registered_engine_resolves_to_a_launcher(name):
    launcher = get_engine(name)
    assert callable(launcher)
    params = list(inspect.signature(launcher).parameters.values())
    assert [p.name for p in params] == ["req"], f"{name}: a launcher takes exactly (req: TrainRequest)"
    hints = typing.get_type_hints(launcher, {"TrainRequest": TrainRequest})
    assert hints == {"req": TrainRequest, "return": int}, f"{name}: launcher must be (req: TrainRequest) -> int"


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_each_spec_is_built_around_its_entry(name):
    """The spec answers from the entry it was built around (no second copy of its name or facts)."""
    assert ENGINES[name].entry is ENTRIES[name] and ENGINES[name].name == name


def test_unknown_engine_is_one_config_error():
    with pytest.raises(ConfigError, match="unknown trainer.engine 'tpu'") as info:
        get_engine("tpu")
    assert info.value.hint == "use one of: native, verl"
    for lookup in (ENTRIES.lookup, ENGINES.lookup):  # the config entry and the spec: the same one line
        with pytest.raises(ConfigError) as again:
            lookup("tpu")
        assert (again.value.message, again.value.hint) == (info.value.message, info.value.hint)


def test_the_preset_and_planner_ask_the_same_entry():
    for name in ("tiny", "tiny-verl"):
        preset = load_preset(name)
        assert spec_for(preset).entry is engine_of(preset) is ENTRIES[preset.trainer.engine]
    native, verl = ENTRIES["native"].planner, ENTRIES["verl"].planner
    assert (native.sharded, native.async_modes, verl.sharded, verl.async_modes) == (False, False, True, True)


def test_a_bad_trainer_engine_is_refused_by_the_schema_with_the_registrys_names(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("extends: tiny\ntrainer:\n  engine: tpu\n")
    with pytest.raises(GspoError) as info:
        load_preset(str(bad))
    shown = f"{info.value.message} {info.value.hint}"
    assert "trainer.engine" in shown and "Input should be 'verl' or 'native'" in shown, shown
    bad.write_text("extends: tiny\ntrainer:\n  engine: [verl]\n")  # not a name at all: the same one error
    with pytest.raises(GspoError) as listed:
        load_preset(str(bad))
    assert "trainer.engine: Input should be 'verl' or 'native'" in listed.value.message
    control = tmp_path / "good.yaml"
    control.write_text("extends: tiny\ntrainer:\n  engine: native\n")
    assert load_preset(str(control)).trainer.engine == "native"


def test_the_schema_default_engine_gets_its_engines_values():
    """A preset that names no engine runs the schema's default one, with that engine's strategy and rollout."""
    from gspo_cli.config.schema import Preset, TrainerSection

    raw = load_preset("tiny-verl").model_dump(mode="json")
    for section, key in (("trainer", "engine"), ("actor", "strategy"), ("rollout", "name")):
        del raw[section][key]
    preset = Preset.model_validate(raw)
    default = TrainerSection.model_fields["engine"].default
    assert preset.trainer.engine == default
    allowed = ENTRIES[default].support.allowed()
    assert (preset.actor.strategy, preset.rollout.name) == (allowed["actor.strategy"][0], allowed["rollout.name"][0])


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_each_engines_job_kinds_run_through_the_job_registry(name):
    for kind in ENTRIES[name].job_kinds:
        registered = job_kinds.KINDS.lookup(kind.name)
        assert registered.keep_traceback == kind.keep_traceback
        module, _, function = kind.main.partition(":")
        assert registered.load().__module__ == module and registered.load().__name__ == function
