"""What verl loads as `reward.custom_reward_function.path=pkg://gspo_cli.rewards.verl_entry` (name
`compute_score`) when a preset says `reward.verifier: gspo`.

verl imports a `pkg://` path with `importlib.import_module` (verl/utils/import_utils.py `load_module`) in each
reward worker, so gspo must be installed in the Python of every node (the one `gspo cluster up/join` starts Ray
with); the file's location on the submitting host does not matter.
"""

from gspo_cli.rewards.score import compute_score

__all__ = ["compute_score"]
