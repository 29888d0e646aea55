"""Merging a verl checkpoint (what `gspo eval --model RUN:STEP` and `gspo export` do first) shows one line, and
verl's merger output (its config dump, torch's DeviceMesh warnings, transformers' `torch_dtype` deprecation,
progress bars) goes to `merge.log` in the merged folder (issue #44, item 5). A merge that fails still says why in
one line, naming the log, which is kept beside the folder it did not make.

The checkpoint is the real FSDP2 layout of test_verl_export.py (DTensor shards saved by 2 gloo ranks); the merge
is the real one (verl's model_merger in a child process), the output checked is what reaches this process's file
descriptors 1 and 2, where the merger's output used to be copied.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from test_verl_export import make_checkpoint

from gspo_cli.errors import ConfigError
from gspo_cli.models import verl_checkpoint

pytestmark = pytest.mark.slow

NOISE = ("ModelMergerConfig(", "DeviceMesh", "Got device mesh", "Saving model to", "`torch_dtype` is deprecated")


@pytest.fixture(scope="module")
def step_dir(tmp_path_factory):
    from gspo_cli.models.tiny import ensure_tiny_model

    root = tmp_path_factory.mktemp("merge-log")
    step = root / "runs" / "r" / "checkpoints" / "global_step_2"
    make_checkpoint(ensure_tiny_model(root / "tiny"), step / "actor")
    return step


def test_a_merge_shows_one_line_and_keeps_the_merger_output_in_its_log(step_dir, capfd):
    said: list[str] = []
    stale = step_dir / "huggingface_merged.merge.log"  # where a failed merge of this step kept its log
    stale.write_text("the log of an earlier failed merge\n")
    target = verl_checkpoint.ensure_hf(step_dir, say=said.append)
    shown = capfd.readouterr()
    assert target == step_dir / verl_checkpoint.MERGED_DIR and (target / "config.json").is_file()
    for text in NOISE:
        assert text not in shown.out + shown.err, (text, shown)
    assert said == [f"merged verl checkpoint {step_dir} into {target} (merger log: {target / 'merge.log'})"]
    log = (target / "merge.log").read_text()
    assert "config: ModelMergerConfig(" in log and "It seems like pickling/unpickling of the DeviceMesh" in log
    assert not stale.exists()  # the merge that worked removed it

    # the next eval of this step reuses the merge and says so
    assert verl_checkpoint.ensure_hf(step_dir, say=said.append) == target
    assert said[1] == f"{step_dir} is a verl checkpoint: using {target}, merged before"


def test_an_incomplete_checkpoint_fails_in_one_line_naming_the_log(step_dir, tmp_path, capfd):
    """Rank 1's shard never arrived: the merger loads rank 0 (torch's DeviceMesh warnings), then safe_load refuses
    the missing file; the error says that, with safe_load's hint and the kept log, and nothing else is shown."""
    actor = tmp_path / "actor"
    shutil.copytree(step_dir / "actor", actor)
    (actor / "model_world_size_2_rank_1.pt").unlink()
    out = tmp_path / "merged"
    with pytest.raises(ConfigError) as info:
        verl_checkpoint.merge(actor, out)
    shown = capfd.readouterr()
    for text in NOISE:
        assert text not in shown.out + shown.err, (text, shown)
    log = tmp_path / "merged.merge.log"  # beside the folder it did not make
    assert not out.exists() and log.is_file()
    assert "ModelMergerConfig(" in log.read_text() and "DeviceMesh" in log.read_text()
    assert info.value.message.endswith(f"(merger log: {log})")
    assert "cannot read" in info.value.message and "model_world_size_2_rank_1.pt" in info.value.message
    assert info.value.hint == "the file is damaged or not a torch file"  # safe_load's, not the pickled-code one


def test_a_merger_failure_is_one_error_line_with_the_logs_last_meaningful_line(step_dir, tmp_path):
    """Through the CLI (`gspo export --local`, the job's code in-process): verl's merger itself fails (the HF
    config it needs is missing) with a traceback in its log; the user sees one `Error:` line with the exception
    and the log's path, no traceback, none of the merger's output. (A good `gspo export --local` shows one line:
    tests/security/test_pickles.py, test_control_a_real_dtensor_shard_still_merges.)"""
    home = tmp_path / "home"
    hf = home / "runs" / "broken" / "checkpoints" / "global_step_2" / "actor" / "huggingface"
    shutil.copytree(step_dir / "actor", hf.parent)
    (hf / "config.json").rename(hf / "config.json.away")
    out = tmp_path / "exported"
    env = {**os.environ, "GSPO_HOME": str(home)}
    export = [sys.executable, "-m", "gspo_cli", "export", "broken", "--local", "--out", str(out)]
    proc = subprocess.run(export, capture_output=True, text=True, env=env, timeout=600)
    log = tmp_path / "exported.merge.log"
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1 and errors[0].endswith(f"(merger log: {log})"), proc.stderr
    assert errors[0].startswith("Error: verl.model_merger failed on ") and "config.json" in errors[0], errors
    assert "Traceback" in log.read_text() and "ModelMergerConfig(" in log.read_text() and not out.exists()
    for text in NOISE:
        assert text not in proc.stdout + proc.stderr, (text, proc.stderr)
