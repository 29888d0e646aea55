"""Write a model and its tokenizer as a Hugging Face folder (save_pretrained), quietly: used by the built-in model
builds (tiny.py, tiny_moe.py) and the native engine's checkpoints."""

from __future__ import annotations


def save_hf_folder(model, tokenizer, folder) -> None:
    """`model` and `tokenizer` into `folder` (save_pretrained) without transformers' "Writing model shards" progress
    bar: a terminal line per built-in model build and per native checkpoint that tells the user nothing. The bar's
    switch is process-wide, so it is put back as it was."""
    from transformers.utils import logging as hf_logging

    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
    finally:
        if was_on:
            hf_logging.enable_progress_bar()
