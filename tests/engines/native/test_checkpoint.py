"""Checkpoint files, retention, partial-save leftovers, metrics truncation, and the resumable sampler."""

from __future__ import annotations

import json
import os

from gspo_cli.engines.native.data import Cursor, PromptSampler
from gspo_cli.metrics.jsonl import MetricsWriter, read_metrics


def test_sampler_cursor_restores_the_stream():
    full = PromptSampler(10, 3, seed=7)
    stream = [full.next_batch() for _ in range(8)]  # crosses epochs (3 batches per epoch, tail dropped)
    assert all(len(set(b)) == 3 for b in stream)
    assert sorted(sum(stream[:3], [])) != list(range(9))  # shuffled...
    assert len(set(sum(stream[:3], []))) == 9  # ...without replacement inside an epoch
    part = PromptSampler(10, 3, seed=7)
    first = [part.next_batch() for _ in range(4)]
    resumed = PromptSampler(10, 3, seed=7, cursor=Cursor(**vars(part.cursor)))
    assert first + [resumed.next_batch() for _ in range(4)] == stream
    assert stream != [PromptSampler(10, 3, seed=8).next_batch() for _ in range(1)] + stream[1:]


def test_metrics_truncate_after_drops_later_and_torn_lines(tmp_path):
    w = MetricsWriter(tmp_path / "metrics.jsonl")
    for step in range(1, 6):
        w.log(step, {"critic/score/mean": step / 10, "nan": float("nan")})
    with open(w.path, "a") as fh:
        fh.write('{"step": 6, "data": {"critic/sc')  # a line torn by a kill
    assert [r["step"] for r in read_metrics(w.path)] == [1, 2, 3, 4, 5]  # readable before the resume cleans it
    assert w.truncate_after(3) == 3
    records = read_metrics(w.path)
    assert [r["step"] for r in records] == [1, 2, 3]
    assert records[0]["data"] == {"critic/score/mean": 0.1, "nan": None}
    assert w.truncate_after(3) == 0
    assert all(json.loads(line) for line in w.path.read_text().splitlines())


def test_save_prune_and_leftovers(gspo_home, tmp_path):
    import torch

    from gspo_cli.engines.native import checkpoint
    from gspo_cli.engines.native.trainer import constant_with_warmup
    from gspo_cli.layout import list_steps
    from gspo_cli.models.loading import load_model, load_tokenizer, resolve_model_path
    from gspo_cli.runs.refs import resolve_model

    path = resolve_model_path("builtin:tiny")
    model, tok = load_model(path), load_tokenizer(path)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = constant_with_warmup(opt, 2)
    run = tmp_path / "run"
    for step in (2, 4, 6):
        checkpoint.save(run, step, model, tok, opt, sched, {"epoch": 0, "position": step}, keep=2)
    assert list_steps(run) == [4, 6]
    umask = os.umask(0)
    os.umask(umask)
    # readable like the files in it (a bare mkdtemp would leave the folder 0700)
    assert (run / "checkpoints" / "global_step_6").stat().st_mode & 0o777 == 0o777 & ~umask
    # A kill mid-save or mid-prune leaves only hidden folders, which are never taken for checkpoints.
    (run / "checkpoints" / ".global_step_8.tmp-x").mkdir()
    (run / "checkpoints" / ".global_step_4.deleting").mkdir()
    assert list_steps(run) == [4, 6]
    checkpoint.clean_partial(run)
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["global_step_4", "global_step_6"]
    ref = resolve_model(str(checkpoint.latest(run)))
    assert ref.step == 6 and ref.run == run and (ref.path / "model.safetensors").is_file() and (ref.path / "tokenizer.json").is_file()
    state = checkpoint.load_state(ref.path)
    assert state["step"] == 6 and state["cursor"] == {"epoch": 0, "position": 6}
    assert set(state) == {"step", "optimizer", "scheduler", "rng", "cursor"}
    # the folder is a plain HF model folder
    reloaded = load_model(str(ref.path))
    for a, b in zip(model.state_dict().values(), reloaded.state_dict().values(), strict=True):
        assert torch.equal(a, b)


def test_prompt_order_is_verls_train_sampler():
    """The native engine draws prompts in the order verl's train sampler does (verl/trainer/ppo/utils.py
    create_rl_sampler with data.shuffle and data.seed), epoch after epoch: the two engines see the same prompts at
    the same step, so their runs compare step by step."""
    from omegaconf import OmegaConf
    from verl.trainer.ppo.utils import create_rl_sampler

    size, batch, seed = 50, 8, 3
    verl_sampler = create_rl_sampler(OmegaConf.create({"shuffle": True, "seed": seed}), list(range(size)))
    verl_order = [i for _ in range(3) for i in verl_sampler]  # three epochs from the one generator
    native = PromptSampler(size, batch, seed=seed)
    per_epoch = size // batch  # verl drops the short tail batch (drop_last), as the native sampler does
    for epoch in range(3):
        got = [native.next_batch() for _ in range(per_epoch)]
        want = verl_order[epoch * size:(epoch + 1) * size]
        assert got == [want[i * batch:(i + 1) * batch] for i in range(per_epoch)], epoch
