"""Sizing: what a preset asks of the hardware, below both the planner (plan/) and the engines (engines/).

`model_facts` (a model's shape: config.json or the Qwen3 tables), `profiles` (one registry entry per hardware
profile: device memory, bandwidths, FLOPS and the step-time model's factors), `memory` / `megatron_memory` (device
and host memory per phase of a verl step, FSDP and Megatron), `memory_checks` (preflight's memory checks against a
profile's device), `run_length` (steps of a run) and `report` (preflight's `Report`, the prepared-data facts, and
`Preflight`, the engine's check the planner is handed). Pure arithmetic and file reads: no torch, Ray or verl.
"""
