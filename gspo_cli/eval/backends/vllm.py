"""vLLM backend: Ray actors, each holding one vLLM engine over a tensor-parallel group; prompts spread across them.

Works with vLLM on GPU and vllm-ascend on NPU (same `vllm.LLM` API; Ray schedules on the `GPU` or `NPU`
resource). vllm is imported only inside the actors. The planning is pure and tested without vLLM:

- `plan_actors(node_devices, tp)`: one actor per whole TP group; a TP group never spans nodes.
- `shard_work(num_prompts, n, num_actors)`: the num_prompts x n sample slots cut into contiguous, balanced
  shards; a shard is a list of `Segment(prompt, start, count)` (samples start..start+count-1 of one prompt), so
  even 30 prompts x 32 samples spread evenly over 16 engines.
- `merge_results(...)`: shard outputs back into per-prompt lists in sample order, checking every slot is filled
  exactly once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gspo_cli.errors import ConfigError
from gspo_cli.eval.types import Generation, Sampling


@dataclass(frozen=True)
class ActorSpec:
    index: int
    node: int  # index into the node list given to plan_actors
    devices: tuple[int, ...]  # node-local device ordinals of this TP group
    tp: int


@dataclass(frozen=True)
class Segment:
    prompt: int
    start: int  # first sample index of this prompt covered here
    count: int


def plan_actors(node_devices: Sequence[int], tp: int, max_actors: int | None = None) -> list[ActorSpec]:
    """TP groups -> actors: floor(devices / tp) groups per node, node by node; devices left over stay idle."""
    if tp < 1:
        raise ConfigError(f"tensor_parallel_size must be >= 1, got {tp}")
    if not node_devices or max(node_devices) < tp:
        raise ConfigError(
            f"no node has {tp} devices for one tensor-parallel group (devices per node: {list(node_devices)})",
            "lower --tp / rollout.tensor_parallel_size; a TP group must fit on one node",
        )
    plan: list[ActorSpec] = []
    for node, count in enumerate(node_devices):
        for g in range(count // tp):
            if max_actors is not None and len(plan) >= max_actors:
                return plan
            plan.append(ActorSpec(index=len(plan), node=node, devices=tuple(range(g * tp, (g + 1) * tp)), tp=tp))
    return plan


def shard_work(num_prompts: int, n: int, num_actors: int) -> list[list[Segment]]:
    """Split the num_prompts*n sample slots into num_actors contiguous shards whose sizes differ by at most one."""
    if num_actors < 1:
        raise ValueError("need at least one actor")
    total = num_prompts * n
    shards: list[list[Segment]] = []
    for a in range(num_actors):
        lo, hi = a * total // num_actors, (a + 1) * total // num_actors
        segs: list[Segment] = []
        slot = lo
        while slot < hi:
            prompt, start = divmod(slot, n)
            count = min(n - start, hi - slot)
            segs.append(Segment(prompt, start, count))
            slot += count
        shards.append(segs)
    return shards


def chunk_segments(segments: Sequence[Segment], chunks: int) -> list[list[Segment]]:
    """Cut one actor's shard into up to `chunks` calls (for progress); order and content unchanged."""
    segments = list(segments)
    if not segments:
        return []
    chunks = max(1, min(chunks, len(segments)))
    return [segments[i * len(segments) // chunks:(i + 1) * len(segments) // chunks] for i in range(chunks)]


def segment_seed(base: int, seg: Segment, n: int) -> int:
    """Per-request seed from the slot, so a sample's seed does not depend on how the work was sharded."""
    return base + seg.prompt * n + seg.start


def merge_results(num_prompts: int, n: int, shards: Sequence[Sequence[Segment]],
                  outputs: Sequence[Sequence[Sequence[Generation]]]) -> list[list[Generation]]:
    """outputs[a][i] holds the generations of shards[a][i]; returns per-prompt lists in sample order."""
    merged: list[list[Generation | None]] = [[None] * n for _ in range(num_prompts)]
    if len(shards) != len(outputs):
        raise ValueError(f"{len(shards)} shards but {len(outputs)} outputs")
    for segs, outs in zip(shards, outputs, strict=True):
        if len(segs) != len(outs):
            raise ValueError(f"a shard has {len(segs)} segments but {len(outs)} outputs")
        for seg, gens in zip(segs, outs, strict=True):
            if len(gens) != seg.count:
                raise ValueError(f"prompt {seg.prompt}: expected {seg.count} samples, got {len(gens)}")
            for j, g in enumerate(gens):
                if merged[seg.prompt][seg.start + j] is not None:
                    raise ValueError(f"prompt {seg.prompt} sample {seg.start + j} generated twice")
                merged[seg.prompt][seg.start + j] = g
    missing = [(p, j) for p in range(num_prompts) for j in range(n) if merged[p][j] is None]
    if missing:
        raise ValueError(f"{len(missing)} sample slots were never generated, first {missing[:3]}")
    return [[g for g in per if g is not None] for per in merged]


def ray_resource(device: str) -> str:
    return {"cuda": "GPU", "npu": "NPU"}.get(device, "GPU")


class _Engine:
    """Body of the Ray actor: one vllm.LLM over this actor's devices."""

    def __init__(self, model_path: str, engine_kwargs: dict):
        from vllm import LLM

        self.llm = LLM(model=model_path, **engine_kwargs)

    def generate(self, prompts: list[str], segments: list[tuple[int, int, int]], sampling: dict, n: int) -> list:
        from vllm import SamplingParams

        params, texts = [], []
        for prompt, start, count in segments:
            seg = Segment(prompt, start, count)
            params.append(SamplingParams(
                n=count, temperature=sampling["temperature"], top_p=sampling["top_p"], top_k=sampling["top_k"],
                max_tokens=sampling["max_tokens"], seed=segment_seed(sampling["seed"], seg, n),
            ))
            texts.append(prompts[prompt])
        results = self.llm.generate(texts, sampling_params=params, use_tqdm=False)
        return [
            [{"text": o.text, "tokens": len(o.token_ids), "finish_reason": o.finish_reason or "stop"}
             for o in sorted(r.outputs, key=lambda o: o.index)]
            for r in results
        ]

    def ready(self) -> bool:
        return True


class VLLMBackend:
    name = "vllm"

    def __init__(self, model_path: str, *, device: str = "cuda", tp: int = 1, dtype: str = "auto",
                 gpu_memory_utilization: float = 0.85, max_model_len: int | None = None,
                 enforce_eager: bool = False, trust_remote_code: bool = False, max_actors: int | None = None,
                 chunks_per_actor: int = 4, address: str | None = None, **_ignored):
        import ray

        if not ray.is_initialized():
            # Inside a Ray job this joins its cluster (RAY_ADDRESS); elsewhere it starts a local instance of its
            # own ("local"): a bare ray.init() would attach to whatever cluster a `ray start` left on this host.
            ray.init(address=address or os.environ.get("RAY_ADDRESS") or "local")
        resource = ray_resource(device)
        alive = [nd for nd in ray.nodes() if nd.get("Alive") and nd.get("Resources", {}).get(resource, 0) >= 1]
        node_devices = [int(nd["Resources"][resource]) for nd in alive]
        self.plan = plan_actors(node_devices, tp, max_actors)
        self.chunks_per_actor = chunks_per_actor
        engine_kwargs = {"tensor_parallel_size": tp, "dtype": dtype, "gpu_memory_utilization": gpu_memory_utilization,
                         "enforce_eager": enforce_eager, "trust_remote_code": trust_remote_code}
        if max_model_len:
            engine_kwargs["max_model_len"] = max_model_len
        if tp > 1:
            # the actor already owns its TP devices; let vLLM fork its workers there instead of asking Ray again
            engine_kwargs["distributed_executor_backend"] = "mp"
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        remote = ray.remote(_Engine)
        self.actors = []
        for spec in self.plan:
            opts = {"num_cpus": 1, "scheduling_strategy": NodeAffinitySchedulingStrategy(
                alive[spec.node]["NodeID"], soft=False)}
            if resource == "GPU":
                opts["num_gpus"] = spec.tp
            else:
                opts["resources"] = {resource: spec.tp}
            self.actors.append(remote.options(**opts).remote(model_path, engine_kwargs))
        ray.get([a.ready.remote() for a in self.actors])

    def generate(self, prompts: list[str], sampling: Sampling, n: int,
                 progress: Callable[[int, int], None] | None = None) -> list[list[Generation]]:
        import ray

        shards = shard_work(len(prompts), n, len(self.actors))
        params = sampling.to_dict()
        if sampling.greedy:
            params.update(temperature=0.0, top_p=1.0, top_k=-1)
        prompts_ref = ray.put(prompts)  # stored once, not copied into every call
        futures = {}
        for a, (actor, segs) in enumerate(zip(self.actors, shards, strict=True)):
            for c, chunk in enumerate(chunk_segments(segs, self.chunks_per_actor)):
                ref = actor.generate.remote(prompts_ref, [(s.prompt, s.start, s.count) for s in chunk], params, n)
                futures[ref] = (a, c, chunk)
        pending = list(futures)
        done_samples, total = 0, len(prompts) * n
        results: dict[tuple[int, int], list] = {}
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                a, c, chunk = futures[ref]
                results[(a, c)] = ray.get(ref)
                done_samples += sum(s.count for s in chunk)
                if progress is not None:
                    progress(done_samples, total)
        outputs = []
        for a, segs in enumerate(shards):
            outs = []
            for c, _chunk in enumerate(chunk_segments(segs, self.chunks_per_actor)):
                outs.extend([[Generation.from_dict(d) for d in seg] for seg in results[(a, c)]])
            outputs.append(outs)
        return merge_results(len(prompts), n, shards, outputs)

    def close(self) -> None:
        import ray

        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
