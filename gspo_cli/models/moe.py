"""Reading and steering a Qwen3-MoE model's routing (transformers' `Qwen3MoeForCausalLM`): the native engine's
routing metrics (engines/native/routing_probe.py) use it; the comparisons themselves are pure (algo/routing.py).

transformers 5 routes each MoE layer through one `Qwen3MoeTopKRouter` module
(transformers/models/qwen3_moe/modeling_qwen3_moe.py): hidden [N, H] -> (router_logits [N, E], the top-k
gate weights [N, k], the top-k expert indices [N, k]); the experts then compute with those weights and indices.
A forward hook on each router therefore sees every routing decision of a forward pass and may replace it:
- `capture(model)`: records the indices of each layer and forward pass; `Capture.calls()` returns [N, L, k] per pass;
- `replay(model, calls)`: forces each layer's expert choice in each pass to the given indices, with the gate weights
  recomputed from the current router as the router itself computes them (softmax over all experts, the chosen
  ones taken, renormalised when `norm_topk_prob`). This is verl's "routing replay" (R2: the old policy's
  routes replayed in the update), here for measurement only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

ROUTER_CLASSES = ("Qwen3MoeTopKRouter",)  # routers whose forward this module knows (see the module doc)


def routers(model) -> list:
    """The routers of `model` in layer order (empty for a dense model or an MoE whose router is not known)."""
    return [m for m in model.modules() if type(m).__name__ in ROUTER_CLASSES]


def is_moe(model) -> bool:
    return bool(routers(model))


def moe_shape(model) -> tuple[int, int, int]:
    """(MoE layers, experts, experts per token) of a model with known routers."""
    found = routers(model)
    if not found:
        raise ValueError("no Qwen3-MoE router in this model")
    return len(found), int(found[0].num_experts), int(found[0].top_k)


@dataclass
class Capture:
    per_layer: list[list[torch.Tensor]] = field(default_factory=list)

    def calls(self) -> list[torch.Tensor]:
        """The expert indices of each forward pass run under the capture, in order: int64 [N, L, k] each, N the
        positions of that pass (batch x sequence, row-major)."""
        import torch

        counts = {len(calls) for calls in self.per_layer}
        if len(counts) != 1:
            raise RuntimeError(f"routers saw different numbers of passes: {[len(c) for c in self.per_layer]}")
        return [torch.stack([calls[i] for calls in self.per_layer], dim=1).long() for i in range(counts.pop())]


@contextmanager
def capture(model) -> Iterator[Capture]:
    """Record every router's expert indices while the block runs."""
    found = routers(model)
    record = Capture([[] for _ in found])

    def hook_for(layer: int):
        def hook(module, args, output):
            record.per_layer[layer].append(output[2].detach())

        return hook

    handles = [r.register_forward_hook(hook_for(i)) for i, r in enumerate(found)]
    try:
        yield record
    finally:
        for h in handles:
            h.remove()


def replayed_output(module, router_logits: torch.Tensor, indices: torch.Tensor):
    """What `module` (a Qwen3MoeTopKRouter) returns when its choice is forced to `indices` [N, k]: the logits, the
    gate weights of the forced experts as the router computes them, the forced indices."""
    import torch

    probs = torch.softmax(router_logits, dtype=torch.float, dim=-1)
    weights = probs.gather(-1, indices)
    if module.norm_topk_prob:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return router_logits, weights.to(router_logits.dtype), indices


@contextmanager
def replay(model, calls: list[torch.Tensor]) -> Iterator[None]:
    """Force every router's expert choice: the i-th forward pass run in the block routes its N positions to
    `calls[i]` [N, L, k] (as `Capture.calls` returns them)."""
    found = routers(model)
    for forced in calls:
        if forced.dim() != 3 or forced.shape[1] != len(found):
            raise ValueError(f"replay indices must be [N, {len(found)}, k] (the model's MoE layers), got "
                             f"{tuple(forced.shape)}")

    def hook_for(layer: int):
        seen = [0]

        def hook(module, args, output):
            if seen[0] >= len(calls):
                raise RuntimeError(f"replay given {len(calls)} pass(es), the block ran more")
            forced = calls[seen[0]][:, layer]
            seen[0] += 1
            logits = output[0]
            if logits.shape[0] != forced.shape[0]:
                raise RuntimeError(f"replay for {forced.shape[0]} positions, the pass has {logits.shape[0]}")
            return replayed_output(module, logits, forced.to(logits.device))

        return hook

    handles = [r.register_forward_hook(hook_for(i)) for i, r in enumerate(found)]
    try:
        yield
    finally:
        for h in handles:
            h.remove()
