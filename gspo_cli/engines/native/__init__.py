"""The native engine: single-process, single-device GSPO training with HF transformers (the reference engine).

Modules: `device` (cpu/cuda/npu choice), `tiny_model` (the built-in tiny Qwen3), `model_io` (load a model
reference), `data` (parquet rows and the resumable sampler), `rollout` (HF generate -> response tensors),
`checkpoint` (atomic save / resume / retention), `metrics` (verl file-logger lines), `trainer` (the loop).
"""
