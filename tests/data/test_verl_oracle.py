"""verl itself as the oracle: its RLHFDataset reads our files, and its reward router scores our rows."""

from __future__ import annotations

import pytest
from raw_factories import write_aime_maxwell

from gspo_cli.data import manifest, prepare


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_verl_reads_and_scores_prepared_rows(qwen_preset, dapo_file, tmp_path):
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset
    from verl.utils.reward_score import default_compute_score

    preset = qwen_preset()
    prepare.prepare(preset, inputs={"dapo-math-17k": str(dapo_file),
                                    "aime-2024": str(write_aime_maxwell(tmp_path / "aime.parquet"))})
    config = OmegaConf.create({"prompt_key": "prompt", "max_prompt_length": 2048, "filter_overlong_prompts": False,
                               "cache_dir": str(tmp_path / "verl-cache")})
    for path, count, source_prefix in ((manifest.train_file(preset), 11, "math_dapo"),
                                       (manifest.val_file(preset), 30, "aime")):
        dataset = RLHFDataset(data_files=[str(path)], tokenizer=None, config=config)
        assert len(dataset) == count
        for i in range(len(dataset)):
            row = dataset[i]
            assert row["data_source"].startswith(source_prefix)
            assert row["raw_prompt"][0]["role"] == "user"
            assert row["raw_prompt"][0]["content"].endswith('on its own line after "Answer:".')
            assert row["index"] == i
            truth = row["reward_model"]["ground_truth"]
            right = default_compute_score(row["data_source"], f"Some work.\nAnswer: {truth}", truth)
            wrong = default_compute_score(row["data_source"], f"Some work.\nAnswer: {int(truth) + 1}", truth)
            assert right["score"] == 1.0 and right["acc"], row
            assert not wrong["acc"]
