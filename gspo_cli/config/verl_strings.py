"""Strings compiled for verl are data: what a preset may write that reaches verl's Hydra/OmegaConf config.

verl composes its config with Hydra and builds objects from it (`omega_conf_to_dataclass`, `hydra.utils.instantiate`
on `_target_`), in the job and in `gspo train --dry-run`'s schema check. So a preset string could run code by two
routes (issue #39, finding 2): an OmegaConf interpolation (`${oc.create:{_target_: ...}}` creates a node with a
`_target_` wherever the string lands: quoting does not stop interpolation), and an `overrides.verl` entry that adds
a `_target_` (or a Hydra key, or a verl key that names code to import) itself.

The rule, applied by the preset schema (every door that loads a preset) and again by the schema check on the
compiled overrides:

- `${` in any string of a preset is refused with one line. Not escaped: an escaped `\\${...}` resolves to the
  literal `${...}`, and verl round-trips parts of its config through `OmegaConf.create` again (to_container then
  create), where the literal would be live once more. No preset field needs an interpolation. The `upstream`
  section is documentation of the script a preset follows (`${HOME}/...` paths), never compiled, and is exempt.
- `overrides.verl` entries: Hydra's instantiation keys (`_target_`, `_partial_`, `_args_`, `_recursive_`,
  `_convert_`), Hydra's own config (`hydra.`, `hydra/`), the job's environment (`runtime_env`, `env_vars`: the
  environment is `env.vars`, under the env-var rule), and verl keys that name Python code to import
  (CODE_KEYS) are refused, wherever they appear in the entry (key or nested value).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

INTERPOLATION = "${"
# Sections whose strings never reach verl (documentation).
NOT_COMPILED = (("upstream",),)
INSTANTIATION_KEYS = ("_target_", "_partial_", "_args_", "_recursive_", "_convert_")
# verl 0.9.1 keys whose value names code verl imports or runs (verl/trainer/config/_generated_ppo_trainer.yaml):
CODE_KEYS = {
    "external_lib": "verl imports it (workers/config/model.py import_external_libs)",
    "custom_backend_module": "verl imports it (checkpoint_engine/base.py import_external_libs)",
    "custom_cls": "verl loads a class from a file (utils/dataset/rl_dataset.py load_extern_object)",
    "custom_reward_function": "verl loads a function from a file (trainer/ppo/reward.py load_extern_object)",
    "reward_loop_module_path": "verl imports a reward module from a file",
    "custom_async_server": "verl loads a server class from a file",
    "optimizer_impl": "verl imports it (workers/config/optimizer.py importlib.import_module)",
    "agent_loop_config_path": "verl loads agent-loop classes named in that file",
    "trust_remote_code": "runs a model repository's own code; set model.trust_remote_code in the preset",
    "runtime_env": "the job's environment (and Ray's py_executable / hooks) comes from env.vars only, under the "
                   "env-var rule (docs/security.md)",
    "env_vars": "the job's environment comes from env.vars only, under the env-var rule (docs/security.md)",
}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def strings(data: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every (key path, string) of a preset's data, keys included (a mapping key is a string verl sees too)."""
    if path in NOT_COMPILED:
        return
    if isinstance(data, dict):
        for key, value in data.items():
            yield (*path, str(key)), str(key)
            yield from strings(value, (*path, str(key)))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from strings(value, (*path, f"[{i}]"))
    elif isinstance(data, str):
        yield path, data


def interpolation_problem(data: Any) -> str | None:
    """One line for the first string holding `${`, or None."""
    for path, text in strings(data):
        if INTERPOLATION in text:
            where = ".".join(path).replace(".[", "[")
            return (f"{where}: '${{' starts an OmegaConf interpolation, which verl would evaluate (it can build "
                    "objects); a preset holds values, not interpolations: write the value itself")
    return None


def override_problem(item: str) -> str | None:
    """Why one `overrides.verl` entry is refused, or None. The key and the value are both searched (a nested value
    `+a={runtime_env: ...}` names the key inside)."""
    key = item.split("=", 1)[0].lstrip("+~").strip()
    if INTERPOLATION in item:
        return f"`{item}`: '${{' starts an OmegaConf interpolation, which verl would evaluate; write the value itself"
    if key == "hydra" or key.startswith(("hydra.", "hydra/")):
        return f"`{item}`: Hydra's own configuration (hydra.*) cannot be set from a preset"
    words = set(_WORD.findall(item))
    for word in INSTANTIATION_KEYS:
        if word in words:
            return f"`{item}`: {word} is a Hydra instantiation key (it builds any Python object); a preset holds values"
    for word, why in CODE_KEYS.items():
        if word in words:
            return f"`{item}`: {word} cannot be set through overrides.verl: {why}"
    return None


def check_interpolations(data: Any) -> None:
    """The preset schema's door: ValueError (one line) for the first `${`."""
    if problem := interpolation_problem(data):
        raise ValueError(problem)


def check_overrides(items: list[str]) -> list[str]:
    """The preset schema's door for `overrides.verl`: ValueError (one line) for the first refused entry."""
    for item in items:
        if problem := override_problem(item):
            raise ValueError(problem)
    return items
