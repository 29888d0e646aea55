"""Issue 44: a run with trainer.save_freq=-1 saved no checkpoint, yet `gspo train` ended with the path of a
checkpoints folder that does not exist. The end-of-run lines name only what is there."""

from __future__ import annotations

from gspo_cli.engines.native.launch import where_lines


def test_no_checkpoints_folder_is_printed_when_none_was_saved(tmp_path):
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    text = where_lines(run)
    assert "checkpoints: none saved" in text and str(run / "checkpoints") not in text
    (run / "checkpoints" / "global_step_2").mkdir(parents=True)  # control: a saved step is named by its folder
    assert f"checkpoints: {run / 'checkpoints'}" in where_lines(run)
