"""The shipped upstream baselines (values + provenance), baseline files and their resolution."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from gspo_cli.accept import baselines, rules, service
from gspo_cli.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "upstream_baselines"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_accept_baselines", ROOT / "docs" / "gen_accept_baselines.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_shipped_files_are_what_the_generator_writes_from_upstreams_files():
    for name, text in _generator().render_all().items():
        assert (baselines.shipped_dir() / name).read_text() == text, f"rerun docs/gen_accept_baselines.py ({name})"


def test_shipped_values_and_provenance():
    by_id = {b.id: b for b in baselines.shipped()}
    assert set(by_id) == {"run_gspo_qwen3_8b_fsdp2_npu", "run_gspo_qwen3_30b_megatron_npu"}
    for b in by_id.values():
        txt = FIXTURES / Path(b.source["path"]).name
        assert b.values == {m: baselines.parse_upstream_text(txt.read_text())[m] for m in rules.METRICS}
        assert b.source["repo"] == "verl-project/verl-ascend-recipe"
        assert b.source["commit"] == "2a3edec04b4d4aaee83b61f050d507c431f63156"
        assert b.source["checker"]["path"] == "baseline/check_npu.py"
        assert b.rules == rules.UPSTREAM_RULES and set(b.source["what"]) == set(rules.METRICS)
    assert by_id["run_gspo_qwen3_8b_fsdp2_npu"].preset == "nightly-gspo-qwen3-8b-a2"
    assert by_id["run_gspo_qwen3_30b_megatron_npu"].route == "megatron"
    assert by_id["run_gspo_qwen3_30b_megatron_npu"].preset == "nightly-gspo-qwen3-30b-a3"
    # the job script version noted: the 15-step one gspo's parity test compares (the 3-step one leaves 5-14 empty)
    assert by_id["run_gspo_qwen3_30b_megatron_npu"].source["job_script"]["commit"].startswith("1dda039b")
    assert by_id["run_gspo_qwen3_8b_fsdp2_npu"].values[rules.REWARD] == 0.3998047


def test_the_shipped_preset_of_a_baseline_exists():
    from gspo_cli.config.presets import load_preset

    for b in baselines.shipped():
        if b.preset:
            preset = load_preset(b.preset)
            assert preset.trainer.total_training_steps == service.STEPS


def test_both_upstream_baselines_run_a_preset_of_their_route():
    from gspo_cli.config.presets import load_preset

    strategy = {"fsdp2": "fsdp2", "megatron": "megatron"}
    for b in baselines.shipped():
        assert b.route in baselines.ROUTES and b.preset, b.id
        assert load_preset(b.preset).actor.strategy == strategy[b.route], b.id


def test_a_route_gspo_does_not_compile_is_refused_in_one_line(tmp_path):
    data = json.loads((baselines.shipped_dir() / "run_gspo_qwen3_30b_megatron_npu.json").read_text())
    f = tmp_path / "other.json"
    f.write_text(json.dumps({**data, "route": "torchtitan"}))
    with pytest.raises(ConfigError, match="verl's torchtitan route, which gspo does not compile") as err:
        service.accept(service.AcceptRequest(baseline=str(f)))
    assert "\n" not in err.value.message


def test_upstream_text_is_read_as_check_npu_reads_it(tmp_path):
    f = tmp_path / "b.txt"
    f.write_text("perf/max_memory_allocated_gb:np.float64(20.5)\ntiming_s/step:8.3e1\nperf/throughput:247\n"
                 "critic/rewards/mean:-.4\ntraining/rollout_probs_diff_mean:0.0045\nnot a line\n")
    b = baselines.read(f)
    assert b.values == {rules.MEMORY: 20.5, rules.THROUGHPUT: 247.0, rules.STEP_TIME: 83.0, rules.REWARD: -0.4,
                        rules.PROBS_DIFF: 0.0045}
    f.write_text("timing_s/step:1\n")
    with pytest.raises(ConfigError, match="lacks actor/perf/max_memory_allocated_gb, perf/throughput"):
        baselines.read(f)


def test_resolution_order_and_errors(tmp_path, gspo_home):
    assert baselines.resolve(None, "nightly-gspo-qwen3-8b-a2").id == "run_gspo_qwen3_8b_fsdp2_npu"
    with pytest.raises(ConfigError, match="no acceptance baseline for preset 'tiny'") as exc:
        baselines.resolve(None, "tiny")
    assert "gspo accept --preset tiny --record" in exc.value.hint
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "other"}))
    with pytest.raises(ConfigError, match="not a gspo acceptance baseline"):
        baselines.resolve(str(bad), None)
    with pytest.raises(ConfigError, match="cannot read baseline"):
        baselines.resolve(str(tmp_path / "absent.json"), None)
