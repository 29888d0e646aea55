"""Presets: lookup, inheritance, overrides, and a clean one-line error for every kind of malformed input."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gspo_cli.config import presets
from gspo_cli.errors import ConfigError

MINIMAL = """\
name: mini
model:
  path: some/model
data:
  train: {source: arith}
  val: {source: arith}
rollout:
  n: 4
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def error_of(ref: str, sets: list[str] | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        presets.load_preset(ref, sets)
    assert info.value.exit_code == 2
    return f"{info.value.message} | hint: {info.value.hint}"


# ---------------------------------------------------------------- the reference preset, value for value


def test_reference_preset_resolved_values(gspo):
    proc = gspo("presets", "show", "qwen3-32b", "--resolved", "--json")
    assert proc.returncode == 0, proc.stderr
    p = json.loads(proc.stdout)
    assert p["name"] == "qwen3-32b-4x16" and "qwen3-32b" in p["aliases"]
    assert (p["cluster"]["nnodes"], p["cluster"]["devices_per_node"], p["cluster"]["device"]) == (4, 16, "npu")
    assert p["cluster"]["profile"] == "a3"
    assert p["model"]["path"] == "Qwen/Qwen3-32B"
    d = p["data"]
    assert (d["train"]["source"], d["val"]["source"]) == ("dapo-math-17k", "aime-2024")
    assert (d["max_prompt_length"], d["max_response_length"], d["truncation"]) == (2048, 8192, "left")
    assert d["train_batch_size"] == 256
    a = p["algorithm"]
    assert a["adv_estimator"] == "grpo" and a["norm_adv_by_std_in_grpo"] is True
    # kl_coef is verl's default 0.001, as upstream keeps it; inert while use_kl_in_reward is false
    assert a["use_kl_in_reward"] is False and a["use_kl_loss"] is False and a["kl_coef"] == 0.001 and a["kl_loss_coef"] == 0
    assert a["entropy_coeff"] == 0
    assert (a["loss_mode"], a["loss_agg_mode"]) == ("gspo", "seq-mean-token-mean")
    assert (a["clip_ratio_low"], a["clip_ratio_high"]) == (3e-4, 4e-4)
    ac = p["actor"]
    assert ac["strategy"] == "fsdp2" and ac["lr"] == 1e-6 and ac["lr_warmup_steps"] == 10
    assert ac["weight_decay"] == 0.1 and ac["grad_clip"] == 1.0 and ac["ppo_mini_batch_size"] == 64
    assert ac["use_dynamic_bsz"] is True and ac["ulysses_sequence_parallel_size"] == 4
    assert ac["ppo_max_token_len_per_device"] == (2048 + 8192) // 4 == 2560
    for flag in ("param_offload", "optimizer_offload", "reshard_after_forward", "forward_prefetch",
                 "entropy_checkpointing", "entropy_from_logits_with_chunking"):
        assert ac[flag] is True, flag
    assert ac["use_torch_compile"] is False
    assert p["model"]["enable_gradient_checkpointing"] is True and p["model"]["use_remove_padding"] is True
    r = p["rollout"]
    assert (r["name"], r["n"], r["tensor_parallel_size"], r["gpu_memory_utilization"]) == ("vllm", 16, 4, 0.7)
    assert r["max_num_batched_tokens"] == 10240 and r["enable_chunked_prefill"] is True
    assert r["enforce_eager"] is False and r["cudagraph_capture_sizes"] == [8, 16, 32, 64, 128, 192, 256]
    assert r["cudagraph_mode"] == "FULL_DECODE_ONLY"
    assert (r["temperature"], r["top_p"], r["top_k"]) == (1.0, 1.0, -1)
    assert r["calculate_log_probs"] is True and r["update_weights_bucket_megabytes"] == 4096
    t = p["trainer"]
    assert t["engine"] == "verl" and t["total_epochs"] == 10 and t["balance_batch"] is True
    assert t["resume_mode"] == "auto"
    # The two documented departures: checkpoints kept (only the last few), and meaningful periodic validation.
    assert t["save_freq"] > 0 and 1 <= t["max_ckpt_to_keep"] <= 3
    assert t["test_freq"] > 0 and r["val"]["n"] >= 8


def test_aliases_and_paths_resolve_to_the_same_preset(tmp_path):
    by_alias = presets.load_preset("qwen3-32b")
    by_name = presets.load_preset("qwen3-32b-4x16")
    path = presets.find_source("qwen3-32b").path
    assert by_alias == by_name == presets.load_preset(str(path))


def test_every_builtin_has_a_header_and_validates():
    for source in presets.builtin_sources():
        assert source.header, f"{source.path.name} lacks a comment header"
        assert "gspo" in source.header
        presets.load_preset(source.name)


def test_user_presets_dir_and_extends(tmp_path, gspo_home):
    user = gspo_home / "presets"
    user.mkdir()
    (user / "my32.yaml").write_text("extends: qwen3-32b\nname: my32\nactor:\n  lr: 2.0e-6\n")
    p = presets.load_preset("my32")
    assert p.name == "my32" and p.actor.lr == 2e-6 and p.aliases == []
    assert p.rollout.n == 16  # inherited
    assert p.actor.ppo_mini_batch_size == 64


def test_set_overrides_are_coerced_by_the_schema():
    p = presets.load_preset("tiny", ["rollout.n=4", "actor.lr=3e-4", "data.arith.ops=['+','-']"])
    assert p.rollout.n == 4 and p.actor.lr == pytest.approx(3e-4) and p.data.arith.ops == ["+", "-"]
    assert presets.load_preset("qwen3-0.6b-1x1", ["trainer.loggers=[console]"]).trainer.loggers == ["console"]


def test_copy_forks_an_editable_preset(tmp_path, gspo):
    dest = tmp_path / "fork.yaml"
    proc = gspo("presets", "copy", "qwen3-32b", str(dest))
    assert proc.returncode == 0, proc.stderr
    p = presets.load_preset(str(dest))
    assert p.name == "fork" and p.aliases == [] and p.rollout.n == 16
    again = gspo("presets", "copy", "qwen3-32b", str(dest))
    assert again.returncode == 2 and "already exists" in again.stderr


# ---------------------------------------------------------------- malformed input: one clean line each


def test_unknown_name_lists_available_and_close_matches():
    with pytest.raises(ConfigError) as info:
        presets.load_preset("qwen3-32")
    assert "unknown preset 'qwen3-32'" in info.value.message
    assert "did you mean qwen3-32b" in info.value.hint and "tiny" in info.value.hint


def test_yaml_syntax_error_names_file_line_col(tmp_path):
    path = write(tmp_path, "bad.yaml", "name: x\nmodel:\n  path: [unclosed\ndata: {}\n")
    msg = error_of(str(path))
    assert f"{path}:" in msg and "YAML syntax error" in msg
    line_col = msg.split(f"{path}:")[1].split(":")[:2]
    assert all(part.isdigit() for part in line_col)


def test_unknown_key_names_path_line_and_suggestion(tmp_path):
    path = write(tmp_path, "typo.yaml", MINIMAL + "actor:\n  lr: 1e-6\n  weight_decy: 0.1\n")
    msg = error_of(str(path))
    assert f"{path}:11" in msg
    assert "actor.weight_decy: unknown key" in msg and "actor.weight_decay" in msg


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ("actor:\n  lr: fast\n", "actor.lr"),
        ("rollout:\n  n: 4\n  top_p: 1.5\n", "rollout.top_p"),
        ("algorithm:\n  clip_ratio_low: 0\n", "algorithm.clip_ratio_low"),
        ("algorithm:\n  loss_mode: gspoo\n", "algorithm.loss_mode"),
        ("trainer:\n  save_freq: 0\n", "save_freq must be -1"),
        ("trainer:\n  test_freq: -5\n", "test_freq must be -1"),
        ("cluster:\n  nnodes: 0\n", "cluster.nnodes"),
        ("cluster:\n  device: tpu\n", "cluster.device"),
        ("data:\n  train: {source: arith}\n  val: {source: arith}\n  train_batch_size: 4\nactor:\n"
         "  ppo_mini_batch_size: 8\n", "ppo_mini_batch_size=8 is larger"),
        ("algorithm:\n  use_kl_loss: true\n", "kl_loss_coef"),
        ("eval:\n  benchmarks:\n    aime2024: {n: 4, k: [1, 8]}\n", "pass@k needs k <= n"),
        ("model: just-a-string\n", "model"),
    ],
)
def test_bad_values_name_the_key(tmp_path, extra, needle):
    text = MINIMAL
    # Later keys of the same section replace the minimal ones: rebuild the mapping through YAML.
    import yaml

    base = yaml.safe_load(text)
    for key, value in yaml.safe_load(extra).items():
        base[key] = value if not isinstance(value, dict) or not isinstance(base.get(key), dict) else {**base[key],
                                                                                                       **value}
    path = write(tmp_path, "bad.yaml", yaml.safe_dump(base, sort_keys=False))
    msg = error_of(str(path))
    assert needle in msg


def test_rollout_n_one_is_rejected_for_grpo(tmp_path):
    msg = error_of("tiny", ["rollout.n=1"])
    assert "rollout.n must be >= 2" in msg


def test_missing_required_section(tmp_path):
    path = write(tmp_path, "nomodel.yaml", "name: x\ndata:\n  train: {source: arith}\n  val: {source: arith}\n")
    assert "model: required key is missing" in error_of(str(path))


def test_empty_and_non_mapping_files(tmp_path):
    assert "empty" in error_of(str(write(tmp_path, "empty.yaml", "")))
    assert "must be a YAML mapping" in error_of(str(write(tmp_path, "list.yaml", "- a\n- b\n")))


def test_duplicate_key(tmp_path):
    path = write(tmp_path, "dup.yaml", MINIMAL + "name: again\n")
    assert "duplicate key 'name'" in error_of(str(path))


def test_circular_extends(tmp_path):
    write(tmp_path, "a.yaml", "extends: b.yaml\nname: a\n")
    write(tmp_path, "b.yaml", "extends: a.yaml\nname: b\n")
    msg = error_of(str(tmp_path / "a.yaml"))
    assert "circular `extends`" in msg and "a -> b -> a" in msg
    write(tmp_path, "self.yaml", "extends: self.yaml\nname: s\n")
    assert "circular" in error_of(str(tmp_path / "self.yaml"))


def test_extends_unknown_parent(tmp_path):
    path = write(tmp_path, "orphan.yaml", "extends: no-such-preset\nname: o\n")
    assert "unknown preset 'no-such-preset'" in error_of(str(path))


def test_child_error_points_at_child_file(tmp_path):
    path = write(tmp_path, "child.yaml", "extends: qwen3-32b\nname: child\nrollout:\n  n: many\n")
    msg = error_of(str(path))
    assert f"{path}:4" in msg and "rollout.n" in msg


@pytest.mark.parametrize(
    ("item", "needle"),
    [
        ("rollout.nn=4", "did you mean rollout.n"),
        ("actor.learning_rate=1", "unknown key 'actor.learning_rate'"),
        ("nosuchsection.x=1", "unknown key"),
        ("rollout.n", "expected KEY=VALUE"),
        ("=3", "empty key path"),
        ("rollout..n=3", "empty key path"),
        ("rollout.n=lots", "rollout.n"),
        ("actor.lr.value=1", "is a value, not a section"),
    ],
)
def test_bad_set_overrides(item, needle):
    assert needle in error_of("tiny", [item])


# ---------------------------------------------------------------- never a traceback (property-based)

yaml_ish = st.text(alphabet=st.sampled_from(list("abc:{}[]-,'\"# \n\t0123456789.&*!|>%@`")), max_size=120)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=yaml_ish)
def test_random_yaml_never_crashes(tmp_path, text):
    path = tmp_path / "fuzz.yaml"
    path.write_text(text)
    try:
        presets.load_preset(str(path))
    except ConfigError as exc:
        assert exc.message.strip()


keys = st.sampled_from(["rollout.n", "actor.lr", "data.arith.ops", "trainer.save_freq", "model", "x", "a.b.c",
                        "cluster.device", "eval.benchmarks.arith.k", "env.vars.FOO", "actor", ""])
values = st.one_of(st.text(max_size=20), st.integers().map(str), st.just("[1, 2"), st.just("{a: 1}"),
                   st.just("null"))


@settings(max_examples=150, deadline=None)
@given(key=keys, value=values)
def test_random_set_never_crashes(key, value):
    try:
        presets.load_preset("tiny", [f"{key}={value}"])
    except ConfigError:
        pass


def test_cli_errors_are_one_clean_line(tmp_path, gspo):
    bad = write(tmp_path, "typo.yaml", MINIMAL + "rolout:\n  n: 4\n")
    for args in (["presets", "show", "nope"], ["presets", "show", str(bad)],
                 ["presets", "show", "tiny", "--set", "rollout.nn=3"]):
        proc = gspo(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert lines[0].startswith("Error: ") and len(lines) <= 3, proc.stderr
    debug = gspo("--debug", "presets", "show", "nope")
    assert debug.returncode == 2 and "Traceback" in debug.stderr


def test_a_preset_file_is_parsed_once_per_process_and_again_when_edited(gspo_home, monkeypatch):
    """issue 44: finding a preset by name parses every built-in (names and aliases are inside); `gspo train` finds
    its preset twice. Each file's YAML is parsed once per text, callers get copies, an edited file is read anew."""
    from gspo_cli.config import preset_yaml

    parsed: list[str] = []
    real = preset_yaml._parse_yaml
    monkeypatch.setattr(preset_yaml, "_PARSED", {})
    monkeypatch.setattr(preset_yaml, "_parse_yaml", lambda text, file: parsed.append(file) or real(text, file))
    first = presets.load("qwen3-32b")
    builtins = len(parsed)
    assert builtins == len(set(parsed)) >= 10 and any(f.endswith("qwen3-32b-4x16.yaml") for f in parsed)
    presets.find_source("qwen3-32b").data["trainer"]["engine"] = "changed by a caller"
    again = presets.load("qwen3-32b")
    assert len(parsed) == builtins and again.preset == first.preset and again.origins == first.origins
    mine = gspo_home / "presets" / "mine.yaml"
    mine.parent.mkdir()
    mine.write_text("extends: qwen3-32b-4x16\nname: mine\ndata:\n  train_batch_size: 128\n")
    assert presets.load("mine").preset.data.train_batch_size == 128
    mine.write_text("extends: qwen3-32b-4x16\nname: mine\ndata:\n  train_batch_size: 64\n")
    assert presets.load("mine").preset.data.train_batch_size == 64
