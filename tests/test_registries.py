"""One registry pattern (gspo_cli/registry.py, the policy-loss registry's): the engines, job kinds, eval backends,
reward backends, health rules and policy losses are each a `Registry` filled by a decorator where each entry is
defined; a name registered twice is refused, an unknown one is one ConfigError naming the known ones."""

from __future__ import annotations

import pytest

from gspo_cli.errors import ConfigError
from gspo_cli.registry import Registry


def registries() -> dict[str, Registry]:
    from gspo_cli import job_kinds
    from gspo_cli.algo.losses import POLICY_LOSSES
    from gspo_cli.engines import ENGINES
    from gspo_cli.eval.backends import BACKENDS
    from gspo_cli.metrics.health import RULES
    from gspo_cli.rewards.backends import REWARD_BACKENDS

    return {"engines": ENGINES, "job kinds": job_kinds.KINDS, "eval backends": BACKENDS,
            "reward backends": REWARD_BACKENDS, "health rules": RULES, "policy losses": POLICY_LOSSES}


def test_every_registry_is_one_pattern_with_its_entries():
    found = registries()
    print("\n| registry | entries |\n|---|---|")
    for name, registry in found.items():
        print(f"| {name} | {', '.join(registry)} |")
        assert isinstance(registry, Registry) and len(registry) >= 2, name
    assert list(found["engines"]) == ["verl", "native"]  # the engine registry's order (config/engine_registry.py)
    assert set(found["job kinds"]) == {"cluster-smoke", "eval", "prepare-data", "train", "train-attempt",
                                       "verl-train", "verl-export"}
    assert list(found["eval backends"]) == ["hf", "vllm"]
    assert list(found["reward backends"]) == ["gspo", "verl", "math-verify"]
    assert {"gspo", "gspo_token", "vanilla"} <= set(found["policy losses"])


def test_a_name_twice_is_refused_and_an_unknown_one_names_the_known():
    reg: Registry[int] = Registry("widget", key="x.widget")

    @reg.register("a")
    def a() -> int:
        return 1

    reg.add("b", 2)
    with pytest.raises(ValueError, match="widget 'a' registered twice"):
        reg.add("a", 3)
    with pytest.raises(ConfigError) as info:
        reg.lookup("c")
    assert info.value.message == "unknown x.widget 'c'" and info.value.hint == "use one of: a, b"
    assert reg.lookup("a") is a


def test_every_health_rule_has_its_settings_section_and_back():
    from gspo_cli.config.health import HealthSection
    from gspo_cli.metrics.health import RULES

    sections = {n for n, f in HealthSection.model_fields.items() if hasattr(f.default_factory, "model_fields")}
    assert set(RULES) == sections - {"stall"}  # the stall watch is the monitor's own clock, not a metric rule


def test_eval_backends_and_job_kinds_load_through_their_registries():
    from gspo_cli import job_kinds
    from gspo_cli.eval.backends import BACKENDS

    assert BACKENDS.lookup("hf")().__name__ == "HFBackend"
    assert job_kinds.KINDS.lookup("train-attempt").keep_traceback and not job_kinds.KINDS["train"].keep_traceback
    with pytest.raises(ConfigError, match="unknown eval backend 'tpu'"):
        BACKENDS.lookup("tpu")
