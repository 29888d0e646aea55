"""Settings (the preset's eval.benchmarks, flags over it; the schema holds every default), the job request file,
prompt restyling."""

from __future__ import annotations

import re

import pytest

from gspo_cli.config.benchmarks import source_of
from gspo_cli.config.presets import load_preset
from gspo_cli.data.manifest import split_path
from gspo_cli.errors import ConfigError, DataError
from gspo_cli.eval import benchmarks
from gspo_cli.eval.request import EvalRequest, read_request, write_request
from gspo_cli.eval.settings import benchmark_settings, resolve_settings


def test_layering(eval_home):
    preset = load_preset("tiny")
    own = preset.eval.benchmarks["arith"]  # the preset's values win over the built-in table
    s = resolve_settings("arith", preset)
    assert (s.n, s.k, s.temperature, s.max_tokens, s.prompt_style) == (
        own.n, own.k, own.temperature, own.max_tokens, own.prompt_style)
    s = resolve_settings("arith", preset, {"n": 8, "k": [1, 8], "temperature": 0.6})
    assert (s.n, s.k, s.temperature, s.max_tokens) == (8, [1, 8], 0.6, own.max_tokens)
    s = resolve_settings("arith", None)  # built-in defaults without a preset
    assert (s.n, s.k, s.temperature, s.max_tokens, s.batch_size, s.seed) == (1, [1], 0.0, 8, 64, 0)
    s = resolve_settings("aime2024", None)  # built-in defaults: DAPO protocol
    assert (s.n, s.k, s.temperature, s.top_p, s.max_tokens) == (32, [1, 4, 8, 16, 32], 1.0, 0.7, 8192)
    assert s.data == eval_home / "data" / "aime-2024" / "val.parquet"
    assert resolve_settings("aime2024", None, {"n": 4}).k == [1, 4]  # smaller n keeps the k's that fit
    preset = load_preset("tiny", ["eval.benchmarks.aime2024.n=16", "eval.benchmarks.aime2024.k=[1,16]"])
    s = resolve_settings("aime2024", preset)
    assert (s.n, s.k, s.top_p) == (16, [1, 16], 0.7)  # preset beats the built-in table only where it sets a value
    with pytest.raises(ConfigError, match="larger than n=2"):
        resolve_settings("arith", None, {"n": 2, "k": [4]})
    with pytest.raises(ConfigError, match="--top-p"):
        resolve_settings("arith", None, {"top_p": 1.5})
    with pytest.raises(ConfigError, match="unknown benchmark"):
        resolve_settings("nosuch", None)


def test_the_issue_case_preset_sets_only_n(eval_home):
    """Issue #11: a preset setting only `eval.benchmarks.aime2024.n: 4` keeps the benchmark's other defaults."""
    preset = load_preset("tiny", ["eval.benchmarks.aime2024.n=4"])
    shown = preset.eval.benchmarks["aime2024"]
    assert (shown.n, shown.k, shown.top_p, shown.max_tokens) == (4, [1, 4], 0.7, 8192)
    assert benchmark_settings("aime2024", preset) == shown
    s = resolve_settings("aime2024", preset)
    assert (s.n, s.k, s.top_p, s.max_tokens) == (4, [1, 4], 0.7, 8192)


def test_every_builtin_preset_x_benchmark_matches_presets_show(eval_home, monkeypatch):
    """What eval resolves == what `gspo presets show NAME --resolved --json` prints, for every built-in preset x
    built-in benchmark (and every benchmark a preset adds), through the real CLI."""
    import json

    from typer.testing import CliRunner

    from gspo_cli.cli import app
    from gspo_cli.config.benchmarks import BUILTIN_BENCHMARKS
    from gspo_cli.config.presets import builtin_sources
    from gspo_cli.eval.settings import data_path

    runner = CliRunner()
    checked = 0
    for source in builtin_sources():
        result = runner.invoke(app, ["presets", "show", source.name, "--resolved", "--json"])
        assert result.exit_code == 0, result.output
        shown = json.loads(result.stdout)["eval"]["benchmarks"]
        assert set(BUILTIN_BENCHMARKS) <= set(shown)
        preset = load_preset(source.name)
        for bench in shown:
            resolved = benchmark_settings(bench, preset)
            assert resolved.model_dump(mode="json") == shown[bench], (source.name, bench)
            if shown[bench]["data"] is None:  # None = the prepare-data output of the benchmark's source
                assert data_path(bench, resolved, preset) == split_path(source_of(bench), "val", preset)
            checked += 1
    assert checked >= 2 * len(builtin_sources())


def test_missing_data_is_a_data_error(tmp_path, monkeypatch):
    monkeypatch.setenv("GSPO_HOME", str(tmp_path))
    with pytest.raises(DataError, match="benchmark data not found") as info:
        resolve_settings("aime2024", load_preset("tiny"))
    assert "gspo prepare-data --preset tiny" in info.value.hint
    with pytest.raises(DataError, match="benchmark data not found") as info:
        resolve_settings("aime2024", load_preset("tiny"), {"data": str(tmp_path / "typo.parquet")})
    assert "check the path" in info.value.hint and "prepare-data" not in info.value.hint


def test_request_file_round_trip(tmp_path):
    req = EvalRequest(benchmark="aime2024", model="run:10", preset="tiny", sets=["a.b=1", "c=d e"], n=4, k=[1, 4],
                      temperature=0.6, top_p=0.95, top_k=20, max_tokens=100, prompt_style="boxed",
                      enable_thinking=False, data="/x.parquet", backend="hf", device="cpu", batch_size=3, tp=2,
                      limit=5, seed=7, out="/o", score_workers=0)
    assert read_request(write_request(req, tmp_path / "r.json")) == req
    assert read_request(write_request(EvalRequest("arith"), tmp_path / "r.json")) == EvalRequest("arith")
    (tmp_path / "bad.json").write_text('{"command": "eval", "benchmark": "arith", "nosuch": 1}')
    with pytest.raises(ConfigError, match="nosuch"):
        read_request(tmp_path / "bad.json")


def test_setting_flags_are_exactly_the_schema_fields():
    from gspo_cli.config.eval_schema import EvalBenchmark
    from gspo_cli.eval.request import SETTING_FLAGS

    assert set(SETTING_FLAGS) == set(EvalBenchmark.model_fields)


def test_request_paths_go_absolute_names_stay(tmp_path, monkeypatch):
    """A Ray job runs in another working directory: relative paths must reach it absolute."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "my.yaml").write_text("extends: tiny\n")

    def through_file(req):
        return read_request(write_request(req, tmp_path / "r.json"))

    req = through_file(EvalRequest(benchmark="arith", model="ckpt", preset="my.yaml", data="d/x.parquet", out="o"))
    assert (req.model, req.preset, req.data, req.out) == (
        str(tmp_path / "ckpt"), str(tmp_path / "my.yaml"), str(tmp_path / "d" / "x.parquet"), str(tmp_path / "o"))
    for name in ("latest", "tiny-run:5", "builtin:tiny"):
        assert through_file(EvalRequest(benchmark="arith", model=name, preset="tiny")).model == name
    assert through_file(EvalRequest(benchmark="arith", preset="tiny")).preset == "tiny"


def test_restyle(eval_home):
    aime = benchmarks.load_problems(eval_home / "data" / "aime-2024" / "val.parquet")
    assert len(aime) == 30 and aime[0].data_source == "aime2024"
    assert benchmarks.restyle(aime[0], None) == aime[0].messages
    boxed = benchmarks.restyle(aime[0], "boxed")[0]["content"]
    assert boxed.startswith("Find the remainder") and boxed.endswith("within \\boxed{}.")
    arith = benchmarks.load_problems(eval_home / "data" / "arith" / "val.parquet")
    assert benchmarks.restyle(arith[0], "plain")[0]["content"].endswith("=")
    assert "Answer:" in benchmarks.restyle(arith[0], "dapo")[0]["content"]


def test_model_folder_checks_and_output_dirs(eval_home, tmp_path):
    from gspo_cli.errors import GspoError
    from gspo_cli.eval import service
    from gspo_cli.runs.refs import ModelRef, resolve_model

    ref = resolve_model("tiny-test")
    assert service.hf_folder(ref) == ref.path
    req = EvalRequest(benchmark="aime2024", model="tiny-test")
    out = service.output_dir(req)  # <benchmark>-<step>-<8-hex digest of the sampling settings>
    assert out.parent == eval_home / "runs" / "tiny-test" / "eval" and re.fullmatch(r"aime2024-5-[0-9a-f]{8}", out.name)
    assert service.output_dir(EvalRequest(benchmark="x", out=str(tmp_path / "o"))) == tmp_path / "o"
    bare = service.output_dir(EvalRequest(benchmark="arith", model="builtin:tiny"))
    assert bare.parent == eval_home / "evals" and bare.name.startswith("builtin-tiny-arith-")
    empty = tmp_path / "not-a-model"
    empty.mkdir()
    with pytest.raises(ConfigError, match="not an HF model folder"):
        service.hf_folder(ModelRef(empty, None, None))
    # a verl checkpoint (actor/fsdp_config.json) goes through the verl engine's exporter, whose merge is cached
    # in <step>/huggingface_merged: with that cache present the merged folder is what gets evaluated
    verl_step = tmp_path / "run" / "checkpoints" / "global_step_3"
    (verl_step / "actor").mkdir(parents=True)
    (verl_step / "actor" / "fsdp_config.json").write_text("{}")
    import shutil

    shutil.copytree(ref.path, verl_step / "huggingface_merged")
    assert service.hf_folder(resolve_model(str(verl_step))) == verl_step / "huggingface_merged"
    # without a cache the real merger runs and fails cleanly on a checkpoint with no shards
    (tmp_path / "run2" / "checkpoints" / "global_step_1" / "actor").mkdir(parents=True)
    bad = tmp_path / "run2" / "checkpoints" / "global_step_1"
    (bad / "actor" / "fsdp_config.json").write_text("{}")
    with pytest.raises(GspoError, match="model_merger"):
        service.hf_folder(resolve_model(str(bad)))


def test_eval_device_follows_the_accelerator_not_the_training_device(monkeypatch):
    """tiny trains on cpu (trainer.device, cluster.device); its eval uses a GPU where there is one, unless
    eval.device or --device pins it. (No GPU here: torch's answer is stubbed; the choice logic is what runs.)"""
    import torch

    from gspo_cli.config.presets import load_preset
    from gspo_cli.eval import service
    from gspo_cli.models import device

    tiny = load_preset("tiny")
    assert (tiny.cluster.device, tiny.trainer.device, tiny.eval.device) == ("cpu", "cpu", "auto")
    real = device.unusable_because
    monkeypatch.setattr(device, "unusable_because", lambda kind: "no NPU" if kind.ascend else real(kind))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert service.choose_device(EvalRequest(benchmark="arith"), tiny) == "cuda"
    assert service.choose_device(EvalRequest(benchmark="arith", device="cpu"), tiny) == "cpu"
    pinned = load_preset("tiny", ["eval.device=cpu"])
    assert service.choose_device(EvalRequest(benchmark="arith"), pinned) == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert service.choose_device(EvalRequest(benchmark="arith"), tiny) == "cpu"


def test_other_data_is_another_result_and_never_overwrites_one(gspo_home, tmp_path, arith_writer):
    """Issue #33: `gspo eval arith --preset tiny --model RUN:600 --force` scored 32 problems (tiny-verl's set in
    the shared folder) instead of 200 and wrote over the earlier result. The data's sha256 is now one of the eval's
    settings: other data is another result folder, and a folder holding a result of other data is never written."""
    import json

    from gspo_cli.errors import ConfigError
    from gspo_cli.eval import service
    from gspo_cli.eval.request import EvalRequest
    from gspo_cli.runs.refs import ModelRef

    data = arith_writer(tmp_path / "val.parquet", rows=24)
    run = gspo_home / "runs" / "r"
    ref = ModelRef(run / "checkpoints" / "global_step_600", run, 600)
    req = EvalRequest(benchmark="arith", model="r:600", data=str(data))
    first = service.wanted_settings(req)
    folder = service.output_dir(req, None, ref)
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps({"settings": first, "data": {"problems": 24}}))
    assert service.evaluated_dir(req, None, ref) == folder

    arith_writer(data, rows=8)  # the same path, other problems
    second = service.wanted_settings(req)
    assert second["data_sha256"] != first["data_sha256"] and second["data"] == first["data"]
    assert service.output_dir(req, None, ref) != folder  # another folder: both results are kept
    assert service.evaluated_dir(req, None, ref) is None  # and not "already evaluated"
    with pytest.raises(ConfigError, match=r"holds an eval of other settings or data \(data_sha256: \w+ \(24 "
                                          r"problems\) there, \w+ now\); it is kept"):
        service.check_replace(folder, second)  # --out naming the first result's folder
    service.check_replace(folder, first)  # the same settings on the same data may replace it (--force)

    # a result of a gspo that recorded no data digest is never taken for this data's
    legacy = run / "eval" / "arith-600"
    legacy.mkdir(parents=True)
    old = {k: v for k, v in second.items() if k != "data_sha256"}
    (legacy / "results.json").write_text(json.dumps({"settings": old, "data": {"problems": 8}}))
    assert service.evaluated_dir(req, None, ref) is None
