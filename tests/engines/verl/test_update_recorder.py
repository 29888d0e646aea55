"""The test-only update recorder (GSPO_TEST_RECORD_UPDATE, engines/verl/cpu/record.py) on a stand-in for verl's
TrainingWorker: it records the first update only (weights before and after, each mini-batch as train_batch got it,
the metrics), keeps a complete recording when a restarted process finds one, and installs nothing unset."""

from __future__ import annotations

import json
import types

import pytest
import torch

from gspo_cli.engines.verl.cpu import record


class _Engine:
    def __init__(self) -> None:
        self.module = torch.nn.Linear(2, 1, bias=False)
        with torch.no_grad():  # exact in float32 under the +1 steps (a random init can round: w + 1 + 1 != w + 2)
            self.module.weight.copy_(torch.tensor([[0.25, -0.5]]))


class _Worker:
    """verl 0.9.1's shape: train_mini_batch loops over mini-batches and calls self.train_batch on each."""

    def __init__(self) -> None:
        self.engine = _Engine()

    def train_batch(self, data):
        with torch.no_grad():
            self.engine.module.weight += 1.0
        return data

    def train_mini_batch(self, data):
        for mini in data:
            self.train_batch(mini)
        return {"metrics": {"actor/pg_loss": [0.5] * len(data)}}


def _module() -> types.ModuleType:
    module = types.ModuleType("fake_engine_workers")
    module.TrainingWorker = type("TrainingWorker", (_Worker,), {})
    return module


def _minis(k: int) -> list[dict]:
    return [{"responses": torch.tensor([[k, 2]]), "mini_batch_size": 4} for _ in range(2)]


class _TD(dict):
    def keys(self):
        return list(super().keys())


def test_first_update_only_with_weights_batches_and_metrics(tmp_path, capsys):
    tmp_path = tmp_path / "record"
    module = _module()
    record._patch(module, tmp_path)
    worker = module.TrainingWorker()
    before = worker.engine.module.weight.detach().clone()
    worker.train_mini_batch([_TD(m) for m in _minis(7)])
    worker.train_mini_batch([_TD(m) for m in _minis(9)])  # a later update: not recorded
    assert torch.equal(torch.load(tmp_path / "before.pt", weights_only=True)["weight"], before)
    assert torch.equal(torch.load(tmp_path / "after.pt", weights_only=True)["weight"], before + 2)  # 2 mini-batches
    assert torch.equal(torch.load(tmp_path / "mini_1.pt", weights_only=True)["responses"], torch.tensor([[7, 2]]))
    assert json.loads((tmp_path / "mini_0.json").read_text()) == {"mini_batch_size": 4}
    assert json.loads((tmp_path / "metrics.json").read_text()) == {"metrics": {"actor/pg_loss": [0.5, 0.5]},
                                                                  "mini_batches": 2}
    assert not (tmp_path / "mini_2.pt").exists()
    assert "recorded the first actor update (2 mini-batches)" in capsys.readouterr().err


def test_a_restarted_process_keeps_the_complete_recording(tmp_path):
    out = tmp_path / "record"
    out.mkdir()
    (out / "metrics.json").write_text("{}")
    module = _module()
    record._patch(module, out)
    module.TrainingWorker().train_mini_batch([_TD(m) for m in _minis(1)])
    assert sorted(p.name for p in out.iterdir()) == ["metrics.json"]


@pytest.mark.parametrize("value", [None, "", "  "])
def test_nothing_is_installed_without_the_switch(value, monkeypatch):
    if value is None:
        monkeypatch.delenv(record.RECORD_ENV, raising=False)
    else:
        monkeypatch.setenv(record.RECORD_ENV, value)
    called = []
    record.install(lambda *a: called.append(a))
    assert called == []
    monkeypatch.setenv(record.RECORD_ENV, "/tmp/x")  # the control: set, it installs the patch
    record.install(lambda *a: called.append(a))
    assert called and called[0][0] == record.WORKERS_MODULE
