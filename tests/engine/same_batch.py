"""Same-batch equivalence: native's policy update on exactly the batch verl updated on, from the same weights.

A recording (GSPO_TEST_RECORD_UPDATE=DIR, gspo_cli/engines/verl/cpu/record.py) holds verl's first actor update of
a tiny-verl run: the weights before it, each mini-batch as verl's loop handed it to the loss (prompts, responses,
response mask, old log-probs, advantages), verl's per-mini-batch metrics and the weights after. `replay` runs the
native engine's own update (engines/native/trainer.py `update_mini_batch`: its forward, its loss from the registry,
its grad clip and AdamW) mini-batch by mini-batch on that batch, and `compare` sets the two side by side.

Tolerances (TOL), and why: both stacks compute in float32 on CPU from the same weights; they differ only in the
order of sums (verl's no-padding forward over whole sequences vs native's prompt-prefix KV cache; reductions in
other orders). One fp32 rounding is 1.2e-7 relative; a forward through the tiny model's layers and a softmax over
its vocabulary compounds that to ~1e-6 on a log-prob (the rollout/actor gap of the same weights measured 3e-7..
7.5e-7 in probability, semantics.SYNC_TOL). So the loss and grad norm of the first mini-batch agree to ~1e-6
relative; each later mini-batch starts from weights one AdamW step apart by such rounding. AdamW's first steps move
each weight by ~lr x sign(grad) (m / sqrt(v) = +-1 on step 1), so a weight whose gradient is at rounding level can
move the other way: weights can differ by up to ~2 lr elementwise while the function they compute agrees. Hence
the checked quantities are the per-mini-batch loss (relative to the size of its terms, mean |A|: the terms cancel),
clip fraction and grad norm (relative 1e-4), the new log-probs
of the batch under the two updated models (absolute 1e-4, the sync check's bound), and the weights (max |diff|
reported against 2 x lr x mini-batches, the bound above). Controls (a wrong clip range, another aggregation, one
mini-batch instead of four) move loss / clip fraction / log-probs by orders of magnitude more.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

TOL = {"pg_loss": 1e-4, "pg_clipfrac": 1e-4, "grad_norm": 1e-4, "new_log_probs": 1e-4}
NEEDED = ("prompts", "responses", "response_mask", "old_log_probs", "advantages")


@dataclass
class Recording:
    before: dict
    after: dict
    minis: list[dict]  # per mini-batch: NEEDED tensors as lists of rows
    verl: dict[str, list[float]]  # verl's per-mini-batch metrics
    lr: float


def load(path: Path) -> Recording:
    import torch

    meta = json.loads((path / "metrics.json").read_text())
    minis = [torch.load(path / f"mini_{i}.pt", weights_only=True) for i in range(meta["mini_batches"])]
    return Recording(torch.load(path / "before.pt", weights_only=True), torch.load(path / "after.pt", weights_only=True),
                     [{k: m[k] for k in NEEDED} for m in minis], meta["metrics"], float(meta["metrics"]["lr"][0]))


def batch_of(minis: list[dict], pad_id: int):
    """One native RolloutBatch of the mini-batches in verl's order (left-padded prompts, right-padded responses),
    with its old log-probs and token advantages [B, R]."""
    import torch

    from gspo_cli.engines.native.rollout import RolloutBatch

    prompts = [p for m in minis for p in m["prompts"]]
    responses = [r for m in minis for r in m["responses"]]
    P, R = max(len(p) for p in prompts), max(len(r) for r in responses)

    def right(rows, width, fill, dtype):
        return torch.stack([torch.cat([r.to(dtype), torch.full((width - len(r),), fill, dtype=dtype)]) for r in rows])

    prompt_ids = torch.stack([torch.cat([torch.full((P - len(p),), pad_id), p]) for p in prompts]).long()
    prompt_mask = torch.stack([torch.cat([torch.zeros(P - len(p)), torch.ones(len(p))]) for p in prompts]).long()
    resp = right(responses, R, pad_id, torch.long)
    resp_mask = right([r for m in minis for r in m["response_mask"]], R, 0, torch.float32)
    attention = torch.cat([prompt_mask, resp_mask.long()], dim=1)
    position = (attention.cumsum(-1) - 1).clamp(min=0)
    groups: dict[tuple, int] = {}
    row_index = [groups.setdefault(tuple(p.tolist()), len(groups)) for p in prompts]
    batch = RolloutBatch(input_ids=torch.cat([prompt_ids, resp], dim=1), attention_mask=attention,
                         position_ids=position, responses=resp, response_mask=resp_mask, prompt_len=P,
                         texts=[""] * len(prompts), row_index=row_index, truncated=torch.zeros(len(prompts), dtype=torch.bool))
    old = right([r for m in minis for r in m["old_log_probs"]], R, 0.0, torch.float32)
    adv = right([r for m in minis for r in m["advantages"]], R, 0.0, torch.float32)
    return batch, old, adv


@dataclass
class Replay:
    per_mini: dict[str, list[float]] = field(default_factory=dict)
    model: object = None
    batch: object = None


def replay(rec: Recording, preset, minis_per_update: int | None = None) -> Replay:
    """Native's update on the recorded batch from the recorded weights. `minis_per_update` merges that many recorded
    mini-batches into one optimizer step (a control); None keeps verl's."""
    from collections import defaultdict

    import torch

    from gspo_cli.engines.native.rollout import Sampling
    from gspo_cli.engines.native.trainer import NativeTrainer
    from gspo_cli.models.loading import load_model, load_tokenizer, resolve_model_path

    path = resolve_model_path(preset.model.path)
    model = load_model(path, "float32", torch.device("cpu"), False)
    missing, unexpected = model.load_state_dict(rec.before, strict=False)
    assert not unexpected and all(k == "lm_head.weight" for k in missing), (missing, unexpected)
    model.train()
    trainer = object.__new__(NativeTrainer)  # the update methods only: no data, no run folder
    trainer.preset, trainer.model, trainer.probe, trainer.step = preset, model, None, 0
    trainer.device = torch.device("cpu")
    trainer.sampling = Sampling(preset.rollout.temperature, 1.0, -1, preset.data.max_response_length)
    trainer.optimizer = torch.optim.AdamW(model.parameters(), lr=rec.lr, weight_decay=preset.actor.weight_decay)
    batch, old, adv = batch_of(rec.minis, load_tokenizer(path).pad_token_id or 0)
    sizes = [len(m["prompts"]) for m in rec.minis]
    step = minis_per_update or 1
    out: dict[str, list[float]] = defaultdict(list)
    first = 0
    for i in range(0, len(sizes), step):
        n = sum(sizes[i:i + step])
        collected: dict[str, list[float]] = defaultdict(list)
        trainer.update_mini_batch(batch, torch.arange(first, first + n), old, adv, collected)
        for key in ("actor/pg_loss", "actor/pg_clipfrac", "actor/grad_norm"):
            out[key.split("/")[1]].append(sum(collected[key]) / len(collected[key]))
        first += n
    return Replay(dict(out), model, batch)


def compare(rec: Recording, run: Replay) -> dict[str, dict[str, float]]:
    """Per quantity: the largest difference between native's replay and verl (relative for the per-mini-batch
    metrics, absolute for the log-probs and weights) and its tolerance."""
    import torch

    from gspo_cli.engines.native.rollout import response_log_probs

    verl = {"pg_loss": rec.verl["actor/pg_loss"], "pg_clipfrac": rec.verl["actor/pg_clipfrac"],
            "grad_norm": rec.verl["grad_norm"]}
    # The loss is a sum of per-token terms ratio x A (ratio ~ 1) that cancel (advantages are centred per group), so
    # its rounding is relative to their size, mean |A| of the mini-batch, not to the (possibly near-0) sum.
    scale = {"pg_loss": [sum(abs(a).sum().item() for a in m["advantages"]) / sum(len(a) for a in m["advantages"])
                         for m in rec.minis]}
    figures: dict[str, dict[str, float]] = {}
    for key, theirs in verl.items():
        ours = run.per_mini.get(key, [])
        if len(ours) != len(theirs):
            figures[key] = {"max_diff": float("inf"), "tol": TOL[key]}
            continue
        sizes = scale.get(key, [0.0] * len(theirs))
        figures[key] = {"max_diff": max(abs(a - b) / max(abs(b), size, 1e-3)
                                        for a, b, size in zip(ours, theirs, sizes, strict=True)), "tol": TOL[key]}
    verl_model = type(run.model)(run.model.config)
    verl_model.load_state_dict(rec.after, strict=False)
    verl_model.tie_weights()
    with torch.no_grad():
        mask = run.batch.response_mask.bool()
        mine, _ = response_log_probs(run.model.eval(), run.batch, 1.0)
        theirs, _ = response_log_probs(verl_model.eval(), run.batch, 1.0)
        figures["new_log_probs"] = {"max_diff": (mine - theirs)[mask].abs().max().item(), "tol": TOL["new_log_probs"]}
        state = run.model.state_dict()
        weight = max((state[k] - v).abs().max().item() for k, v in rec.after.items() if k in state)
    figures["weights"] = {"max_diff": weight, "tol": 2 * rec.lr * len(rec.minis)}
    return figures


def failures(figures: dict[str, dict[str, float]]) -> list[str]:
    return [f"{k}: {v['max_diff']:.3g} > {v['tol']:.3g}" for k, v in figures.items() if not v["max_diff"] <= v["tol"]]


# Controls: each must fail `failures` on the same recording (a different clip range: fewer sequences clipped;
# another aggregation; one optimizer step over the four mini-batches).
CONTROLS = {"clip range 0.05": (["algorithm.clip_ratio_low=0.05", "algorithm.clip_ratio_high=0.05"], None),
            "loss_agg_mode token-mean": (["algorithm.loss_agg_mode=token-mean"], None),
            "one mini-batch": ([], "all")}


def verdict(path: Path, preset_name: str, sets: list[str] | None = None) -> dict[str, dict]:
    """{"run": figures, <control>: figures} for the recording in `path` replayed with the preset (+ sets)."""
    from gspo_cli.config.presets import load_preset

    rec = load(path)
    out = {"run": compare(rec, replay(rec, load_preset(preset_name, sets or [])))}
    for name, (extra, merge) in CONTROLS.items():
        preset = load_preset(preset_name, [*(sets or []), *extra])
        out[name] = compare(rec, replay(rec, preset, len(rec.minis) if merge == "all" else None))
    return out


def table(result: dict[str, dict]) -> str:
    keys = list(result["run"])
    lines = ["".ljust(26) + " ".join(k.rjust(13) for k in keys), "tolerance".ljust(26)
             + " ".join(f"{result['run'][k]['tol']:13.3g}" for k in keys)]
    for name, figures in result.items():
        lines.append(name.ljust(26) + " ".join(f"{figures[k]['max_diff']:13.3g}" for k in keys))
    return "\n".join(lines)
