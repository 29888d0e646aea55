"""gspo: from a bare Ascend NPU cluster (or a GPU box, or a laptop CPU) to an evaluated GSPO run of Qwen3."""

__version__ = "0.1.0"
