"""compile's declarative table (engines/verl/overrides.py rows): each row's origin is the preset key it read, so
every origin a compiled preset records names a real preset key (or says it is derived, a CPU switch, or the user's
overrides.verl item)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gspo_cli.config import presets
from gspo_cli.engines.verl.compile import compile_preset
from gspo_cli.engines.verl.overrides import Derived, Only, Row, Section, Table, apply, copies, is_set, read

PATHS = dict(run_dir="/r/run", train_file="/d/t.parquet", val_file="/d/v.parquet")
NOT_A_KEY = ("derived: ", "cpu switch: ", "overrides.verl[")


def _verl_presets() -> list[str]:
    return [s.name for s in presets.builtin_sources() if presets.load_preset(s.name).trainer.engine == "verl"]


def _unresolved_origins(preset, origins: dict[str, str]) -> list[str]:
    """The origins that name no preset key (those that say derived / cpu switch / overrides.verl aside)."""
    bad = []
    for key, origin in origins.items():
        if origin.startswith(NOT_A_KEY):
            continue
        try:
            read(preset, origin)
        except AttributeError:
            bad.append(f"{key} <- {origin}")
    return bad


@pytest.mark.parametrize("name", _verl_presets())
@pytest.mark.parametrize("sets", [[], ["trainer.mode=separate_async", "data.seed=3",
                                       "rollout.moe_load_balance_metrics_interval=2"]], ids=["as-is", "variant"])
def test_every_origin_names_a_preset_key(name, sets):
    preset = presets.load_preset(name, sets)
    compiled = compile_preset(preset, **PATHS, resume_from="/r/run/checkpoints/global_step_2", model_path="/m")
    assert compiled.origins and _unresolved_origins(preset, compiled.origins) == []
    # control: an origin that names no preset key is found
    assert _unresolved_origins(preset, {"x": "actor.no_such_key"}) == ["x <- actor.no_such_key"]


def _preset(**data):
    ns = {k: SimpleNamespace(**v) for k, v in data.items()}
    return SimpleNamespace(preset=SimpleNamespace(**ns))


def _put(call, *entries):
    t = Table()
    apply(t, call, entries)
    return t.out, t.origins


def test_a_row_records_the_key_it_read():
    call = _preset(data={"seed": None, "shuffle": True}, trainer={"seed": 7, "mode": "sync"})
    out, origins = _put(call, *copies("data", "data", "shuffle"), Row("data.seed", ("data.seed", "trainer.seed")),
                        Row("trainer.v1.trainer_mode", "trainer.mode", when=lambda mode: mode != "sync"))
    assert out == ["data.shuffle=True", "data.seed=7"]  # sync compiles to nothing
    assert origins == {"data.shuffle": "data.shuffle", "data.seed": "trainer.seed"}
    call.preset.data.seed = 3
    assert _put(call, Row("data.seed", ("data.seed", "trainer.seed")))[1] == {"data.seed": "data.seed"}


def test_sections_derived_values_and_branches():
    call = _preset(algorithm={"rc": SimpleNamespace(a=1, b=None)}, model={"path": "org/m"})
    call.run_dir = "/runs/x"
    out, origins = _put(
        call,
        Section("verl.rc", "algorithm.rc", vars, added=lambda key: key == "b"),
        Derived("trainer.dir", "the run folder", lambda c: c.run_dir),
        Only(lambda c: False, (Row("never", "model.path"),), otherwise=(Row("m.path", "model.path", when=is_set),)),
    )
    assert out == ["verl.rc.a=1", "+verl.rc.b=null", "trainer.dir=/runs/x", "m.path=org/m"]
    assert origins == {"verl.rc.a": "algorithm.rc.a", "verl.rc.b": "algorithm.rc.b",
                       "trainer.dir": "derived: the run folder", "m.path": "model.path"}


def test_a_key_set_again_keeps_its_place_and_takes_the_new_origin():
    call = _preset(cluster={"nnodes": 2}, trainer={"nodes": 1})
    out, origins = _put(call, Row("trainer.nnodes", "cluster.nnodes"), Row("other", "cluster.nnodes"),
                        Row("trainer.nnodes", "trainer.nodes"))
    assert out == ["trainer.nnodes=1", "other=2"]
    assert origins["trainer.nnodes"] == "trainer.nodes"
