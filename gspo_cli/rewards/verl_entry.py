"""The file verl loads by path: `custom_reward_function.path=<this file>`, `custom_reward_function.name=compute_score`.

verl imports it with importlib.util.spec_from_file_location, outside any package, so only absolute imports.
"""

from gspo_cli.rewards.score import compute_score

__all__ = ["compute_score"]
