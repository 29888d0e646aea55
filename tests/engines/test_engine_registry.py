"""The engine registry: every entry resolves to a launcher of the one protocol, and the engine names agree with
what config knows (the schema's trainer.engine values and config/engine_support.py)."""

from __future__ import annotations

import inspect
import typing

import pytest

from gspo_cli.config.engine_support import ENGINES as SUPPORT
from gspo_cli.config.schema import TrainerSection
from gspo_cli.engines import ENGINES, TrainRequest, get_engine
from gspo_cli.errors import ConfigError


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_every_registered_engine_resolves_to_a_launcher(name):
    launcher = get_engine(name)
    assert callable(launcher)
    params = list(inspect.signature(launcher).parameters.values())
    assert [p.name for p in params] == ["req"], f"{name}: a launcher takes exactly (req: TrainRequest)"
    hints = typing.get_type_hints(launcher, {"TrainRequest": TrainRequest})
    assert hints == {"req": TrainRequest, "return": int}, f"{name}: launcher must be (req: TrainRequest) -> int"


def test_engine_names_agree_with_config():
    assert set(ENGINES) == set(SUPPORT) == set(typing.get_args(TrainerSection.model_fields["engine"].annotation))


def test_unknown_engine_is_one_config_error():
    with pytest.raises(ConfigError, match="unknown trainer.engine 'tpu'") as info:
        get_engine("tpu")
    assert "native" in info.value.hint and "verl" in info.value.hint
