"""verl 0.9.1 defaults that change a recipe's meaning (engines/verl/explicit_defaults.py): the schema's defaults are
verl's own (its generated trainer yaml is the oracle), every built-in preset writes them, and compile always
passes them, so a changed value reaches verl's composed config."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gspo_cli.config import presets
from gspo_cli.config.schema import Preset
from gspo_cli.engines.verl import explicit_defaults, schema_check
from gspo_cli.engines.verl.compile import compile_preset, override_key

PRESETS = Path(__file__).resolve().parents[3] / "presets"
PATHS = dict(run_dir="/r/run", train_file="/d/t.parquet", val_file="/d/v.parquet")


def _verl_yaml_value(key: str):
    import verl

    node = yaml.safe_load((Path(verl.__file__).parent / "trainer" / "config" / "_generated_ppo_trainer.yaml").read_text())
    for part in key.split("."):
        node = node[part]
    return node


def _schema_default(path: str):
    section, *rest = path.split(".")
    model = Preset.model_fields[section].default_factory()
    for part in rest:
        model = getattr(model, part)
    return model


@pytest.mark.parametrize("verl_key, path", explicit_defaults.EXPLICIT)
def test_schema_default_is_verls(verl_key, path):
    assert _schema_default(path) == _verl_yaml_value(verl_key)


@pytest.mark.parametrize("file", sorted(PRESETS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_preset_writes_them_or_inherits_them(file):
    raw = yaml.safe_load(file.read_text())
    if "extends" in raw:
        file = PRESETS / f"{presets.load(raw['extends']).preset.name}.yaml"
        raw = yaml.safe_load(file.read_text())
    for _, path in explicit_defaults.EXPLICIT:
        node = raw
        for part in path.split("."):
            assert part in node, f"{file.name} does not write {path}"
            node = node[part]


@pytest.mark.parametrize("name", ["qwen3-30b-a3b-2x16", "qwen3-8b-1x16"])
def test_compiled_every_time(name):
    compiled = compile_preset(presets.load_preset(name), **PATHS)
    keys = {override_key(o) for o in compiled.overrides}
    assert {k for k, _ in explicit_defaults.EXPLICIT} <= keys


def test_a_changed_value_reaches_verls_composed_config():
    from omegaconf import OmegaConf

    preset = presets.load_preset("qwen3-8b-1x16", ["actor.lr_scheduler_type=cosine",
                                                   "algorithm.filter_groups.enable=true",
                                                   "algorithm.filter_groups.metric=acc"])
    cfg = schema_check.compose(compile_preset(preset, **PATHS).overrides)
    assert OmegaConf.select(cfg, "actor_rollout_ref.actor.optim.lr_scheduler_type") == "cosine"
    assert OmegaConf.select(cfg, "algorithm.filter_groups.enable") is True
    assert OmegaConf.select(cfg, "algorithm.filter_groups.metric") == "acc"


def test_native_engine_refuses_what_it_cannot_run():
    from gspo_cli.errors import ConfigError

    for sets in (["algorithm.filter_groups.enable=true"], ["actor.lr_scheduler_type=cosine"]):
        with pytest.raises(ConfigError):
            presets.load_preset("tiny", sets)
    assert presets.load_preset("tiny").actor.lr_scheduler_type == "constant"
