"""`gspo env doctor`: probe this host (or every node of the cluster), judge the facts into checks, time it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gspo_cli.checks import Check


@dataclass
class Diagnosis:
    checks: list[Check]
    exit_code: int  # 1 when any check is an error
    seconds: float
    facts: dict[str, Any] | None = None  # this host's probe facts (local doctor)
    nodes: list[dict[str, Any]] = field(default_factory=list)  # every node's facts (--cluster)


def diagnose(preset: Any = None, *, cluster: bool = False, address: str | None = None,
             environment: Callable[[], dict[str, Any]] | None = None) -> Diagnosis:
    """The checks of this host, or with `cluster` of every alive Ray node plus the cross-node checks.
    `environment`: what the preset's engine needs of this interpreter, as its spec answers it (`Environment.to_json`;
    `cli/` hands it in, the env layer does not import the engines), probed beside the host probes."""
    from gspo_cli.env.checks import exit_code, local_checks

    start = time.monotonic()
    facts, nodes = None, []
    if cluster:
        from gspo_cli.env import cluster as cluster_mod

        checks, nodes = cluster_mod.run(preset, address)
    else:
        from concurrent.futures import ThreadPoolExecutor

        from gspo_cli.env.probes import collect_facts

        with ThreadPoolExecutor(max_workers=1) as pool:
            needed = pool.submit(environment) if environment is not None else None
            facts = collect_facts(extra_env=tuple(preset.env.vars) if preset is not None else (),
                                  secret_env=tuple(preset.env.secrets) if preset is not None else ())
            env = needed.result() if needed is not None else None
        checks = local_checks(facts, preset, env)
        if env is not None:
            facts = {**facts, "engine_environment": env}
    return Diagnosis(checks, exit_code(checks), round(time.monotonic() - start, 3), facts, nodes)


def exports_here(preset: Any, *, stack: str | None = None, head: str | None = None):
    """The preset's exports judged against the stack installed here, or against `stack` (`vllm-ascend==X`)."""
    from gspo_cli.env import exports
    from gspo_cli.env.probes import collect_facts

    version = exports.parse_stack(stack) if stack else None
    facts = collect_facts(with_python=version is None)
    return exports.build(preset, stack=version, facts=facts, head=head or preset.cluster.address)
