"""`actor.megatron`: verl's Megatron actor (`actor.strategy: megatron`), as a modelled preset section.

Every field maps onto a key of verl 0.9.1's Megatron engine config (verl/trainer/config/engine/megatron.yaml,
composed under `actor_rollout_ref.actor.megatron` when `model_engine=megatron`); the compile step is
engines/verl/megatron.py. Offloads are the actor's own `param_offload` / `optimizer_offload` (one fact, one place);
verl 0.9.1 has no `grad_offload` key: its `param_offload` also releases the gradient buffers while inactive
(engine/megatron.yaml, the comment on `param_offload`). Unknown keys are errors, as in every section.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from gspo_cli.config.section import PositiveInt, Section

# The rules below take schema.py's ActorSection and Preset, typed Any: schema.py imports this module, and even a
# TYPE_CHECKING import back would make an import circle (tests/test_import_layers.py).
# verl 0.9.1 reads `router_replay` only on its Megatron (and veomni) engine (verl/workers/engine_workers.py:496-505:
# any other strategy gets mode "disabled"), so on the FSDP route the option would silently do nothing.
ROUTING_REPLAY_FSDP = ("actor.megatron.router_replay is verl's Megatron engine option (verl 0.9.1 reads "
                       "router_replay only for actor.strategy megatron, workers/engine_workers.py:496-505; its FSDP "
                       "engine has no router replay)")
ROUTING_REPLAY_NATIVE = ("the native engine has no routing replay (it samples and trains with one model, so "
                         "rollout and training route the same tokens alike)")


class TransformerOverrides(Section):
    """`override_transformer_config` entries gspo models (Megatron-core TransformerConfig fields, passed through by
    verl); None leaves verl's default. Anything else: `overrides.verl`."""

    # verl's defaults: granularity/method/num_layers null, modules [core_attn] (engine/megatron.yaml)
    recompute_granularity: Literal["full", "selective"] | None = None
    recompute_method: Literal["uniform", "block"] | None = None
    recompute_num_layers: PositiveInt | None = None
    recompute_modules: list[str] | None = None
    # the router's softmax / top-k in this dtype (upstream's nightly: fp32); not in verl's defaults
    moe_router_dtype: Literal["fp32", "fp64"] | None = None
    moe_permute_fusion: bool | None = None
    apply_rope_fusion: bool | None = None

    @model_validator(mode="after")
    def _recompute(self) -> TransformerOverrides:
        # Megatron-core's TransformerConfig: full recompute needs a method and a layer count; the two are read only
        # with full (selective recomputes recompute_modules)
        layered = self.recompute_method is not None or self.recompute_num_layers is not None
        if self.recompute_granularity == "full" and (self.recompute_method is None or self.recompute_num_layers is None):
            raise ValueError("recompute_granularity full needs recompute_method (uniform | block) and "
                             "recompute_num_layers")
        if self.recompute_granularity != "full" and layered:
            raise ValueError("recompute_method and recompute_num_layers are read only with recompute_granularity: full")
        return self


# verl's defaults for the keys it already has (a '+' override of one of these would be refused by Hydra)
VERL_TRANSFORMER_KEYS = frozenset({"recompute_granularity", "recompute_method", "recompute_num_layers",
                                   "recompute_modules", "attention_backend"})


class MegatronSection(Section):
    """Megatron parallelism of the actor (the reference model mirrors it, as upstream's nightly sets it)."""

    tensor_model_parallel_size: PositiveInt = 1
    pipeline_model_parallel_size: PositiveInt = 1
    expert_model_parallel_size: PositiveInt = 1
    # None: verl's default (the same as tensor_model_parallel_size)
    expert_tensor_parallel_size: PositiveInt | None = None
    # load HF weights through mbridge (verl's default true); vanilla_mbridge: the legacy mbridge backend
    # (deprecated in verl 0.9.1, still what upstream's nightly uses)
    use_mbridge: bool = True
    vanilla_mbridge: bool = False
    override_transformer_config: TransformerOverrides = Field(default_factory=TransformerOverrides)
    # Routing replay (verl's router_replay.mode): R2 records the experts the actor's old-log-prob pass routed
    # each token to and replays them in the update; R3 records them in the rollout (vLLM) and replays them in
    # both actor passes (it turns rollout.enable_rollout_routing_replay on). docs/presets.md: when GSPO needs it.
    router_replay: Literal["disabled", "R2", "R3"] = "disabled"

    @property
    def model_parallel(self) -> int:
        """Devices one dense model replica spans (TP x PP)."""
        return self.tensor_model_parallel_size * self.pipeline_model_parallel_size

    @property
    def expert_tp(self) -> int:
        return self.expert_tensor_parallel_size or self.tensor_model_parallel_size

    @property
    def expert_parallel(self) -> int:
        """Devices one expert replica spans (EP x ETP x PP)."""
        return self.expert_model_parallel_size * self.expert_tp * self.pipeline_model_parallel_size


def _check_other_strategy(actor: Any) -> None:
    """`actor.megatron` set on another strategy: ValueError naming the key (routing replay with its own reason)."""
    m = actor.megatron
    if m == MegatronSection():
        return
    if m.router_replay != "disabled":
        why = ROUTING_REPLAY_NATIVE if actor.strategy == "native" else ROUTING_REPLAY_FSDP
        raise ValueError(f"actor.megatron.router_replay {m.router_replay} needs actor.strategy: megatron "
                         f"(it is {actor.strategy}): {why}")
    raise ValueError(f"actor.megatron is set but actor.strategy is {actor.strategy}: actor.megatron configures "
                     "verl's Megatron actor only (set actor.strategy: megatron, or remove actor.megatron)")


def check_preset(p: Any) -> None:
    """Cross-section rules of the Megatron route that need no model or cluster (ValueError, key paths named)."""
    a = p.actor
    if a.strategy != "megatron":
        _check_other_strategy(a)
        return
    fsdp_only = {"ulysses_sequence_parallel_size": 1, "reshard_after_forward": True, "forward_prefetch": False,
                 "use_torch_compile": False, "entropy_checkpointing": False}
    for key, default in fsdp_only.items():
        if getattr(a, key) != default:
            raise ValueError(f"actor.{key} is an FSDP setting; verl's Megatron actor does not read it (use "
                             "actor.megatron's parallel sizes, or actor.strategy: fsdp2)")
    if p.model.dtype not in ("bfloat16", "float16"):
        raise ValueError(f"model.dtype {p.model.dtype}: verl 0.9.1's Megatron engine trains in bfloat16 or float16 "
                         "(engine/megatron.yaml dtype); use one of them, or actor.strategy: fsdp2")
    rr = a.megatron.router_replay
    if rr == "R2" and p.rollout.moe_load_balance_metrics_interval:
        # verl 0.9.1 refuses routed_experts from both sides at the first step (trainer/ppo/ray_trainer.py:1602-1609)
        raise ValueError("actor.megatron.router_replay R2 cannot run with rollout.moe_load_balance_metrics_interval "
                         "(which records the rollout's routes: R3's input); use router_replay R3, or set the "
                         "interval to 0")
    rc = p.algorithm.rollout_correction
    if rr == "R2" and rc is not None and rc.bypass_mode:
        # engine/megatron.yaml: "R2: ... Requires algorithm.rollout_correction.bypass_mode=false"
        raise ValueError("actor.megatron.router_replay R2 records routes in the actor's old-log-prob pass, which "
                         "algorithm.rollout_correction.bypass_mode skips; use R3 or bypass_mode: false")
