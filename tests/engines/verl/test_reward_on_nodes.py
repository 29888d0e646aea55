"""The reward override resolves on every node: a Ray task pinned to each alive node of a real local head takes the
exact override string gspo compiles, builds verl's config from it and calls verl's own loader
(`verl.trainer.ppo.reward.get_custom_reward_fn`, via `rewards.choice.probe_with_verl`) in the worker process,
then scores a right and a wrong response with it. The same
task shows why an absolute file path of the submitting host cannot work: another host's install path does not
exist in the worker.
"""

from __future__ import annotations

import os

import pytest
import verl as _verl  # noqa: F401  (verl is a dev dependency: without it this module errors, never skips)

pytestmark = [pytest.mark.ray]


def test_reward_override_resolves_in_a_worker_on_every_node(ray_head, tmp_path):
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from gspo_cli.config import presets
    from gspo_cli.engines.verl.compile import compile_preset
    from gspo_cli.rewards.choice import probe_with_verl

    compiled = compile_preset(presets.load_preset("qwen3-32b-4x16"), run_dir=tmp_path / "run",
                              train_file="/d/t.parquet", val_file="/d/v.parquet")
    reward = [o for o in compiled.overrides if o.startswith("reward.custom_reward_function.")]
    assert reward == ["reward.custom_reward_function.path=pkg://gspo_cli.rewards.verl_entry",
                      "reward.custom_reward_function.name=compute_score"]
    elsewhere = ["reward.custom_reward_function.path=/opt/submit-host/site-packages/gspo_cli/rewards/verl_entry.py",
                 "reward.custom_reward_function.name=compute_score"]
    ray.init(address=ray_head.address, log_to_driver=False)
    try:
        task = ray.remote(num_cpus=0)(probe_with_verl)
        nodes = [n for n in ray.nodes() if n["Alive"]]
        assert nodes
        for node in nodes:
            pin = NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False)
            got, old_way = ray.get([task.options(scheduling_strategy=pin).remote(reward),
                                    task.options(scheduling_strategy=pin).remote(elsewhere)], timeout=180)
            print(f"node {node['NodeManagerAddress']}: {got}")
            assert "error" not in got, got
            assert got["right"]["score"] == 1.0 and got["right"]["acc"] is True
            assert got["wrong"]["score"] == -1.0 and got["wrong"]["acc"] is False
            assert got["pid"] != os.getpid() and got["module_file"].endswith("gspo_cli/rewards/verl_entry.py")
            print(f"absolute path of another host: {old_way['error']}")
            assert old_way["error"].startswith("FileNotFoundError: Custom module file not found")
    finally:
        ray.shutdown()
