"""Run an upstream verl launch script with bash, launching nothing, and compare it with a compiled preset: the
parity tests' tool (test_upstream_parity.py; moved here from gspo_cli/engines/verl/upstream.py, which keeps the
dry-run's departures table).

`run_script` executes the script with its own shell defaults (`${VAR:-default}`, `$((...))`, `case`, arrays)
under `env -i`, with `python3`, `ulimit`, `tee`, `mkdir` and `rm` replaced by shell functions that record
instead of act: what reaches `python3 -m verl.trainer.main_ppo` is its Hydra overrides, the environment at
that moment minus the starting one is its exports, and the `ulimit` calls are its node setup. Bash itself
resolves the script, so nothing here re-implements shell grammar.

`compare` composes both override lists with verl's own Hydra config (`schema_check.compose`, struct mode, so
verl's defaults and renames apply) and reports every key either side sets whose composed values differ, plus
the exports and limits. The parity tests check that list against the preset's `upstream.departures`.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gspo_cli.config.schema import Departure, Preset

VERL_MAIN = "verl.trainer.main_ppo"
HOME = "/home/upstream"  # $HOME inside the script: paths built from it read as upstream's defaults

_PRELUDE = r"""
python3() {
  if [ "${1:-}" = "-m" ]; then
    printf '%s\0' "$@" > "$GSPO_UPSTREAM_OUT/argv"
    env -0 > "$GSPO_UPSTREAM_OUT/env"
  fi
  return 0
}
ulimit() { printf '%s\n' "$*" >> "$GSPO_UPSTREAM_OUT/ulimit"; }
tee() { cat > /dev/null; }
mkdir() { :; }
rm() { :; }
"""


@dataclass
class UpstreamRun:
    script: str
    overrides: list[str]
    env: dict[str, str]  # what the script exports (and sets on the launch line)
    ulimits: list[str]  # arguments of each `ulimit` call, e.g. "-n 32768"

    @property
    def nofile(self) -> int | None:
        for call in self.ulimits:
            parts = call.split()
            if len(parts) == 2 and parts[0] in ("-n", "-Sn", "-Hn"):
                return int(parts[1])
        return None


def run_script(path: str | Path, inputs: dict[str, str] | None = None) -> UpstreamRun:
    """Execute `path` with stubbed commands; `inputs` are variables the caller sets (e.g. DEVICE=npu)."""
    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="gspo-upstream-") as tmp:
        prelude = Path(tmp) / "prelude.sh"
        prelude.write_text(_PRELUDE, encoding="utf-8")
        start = {"HOME": HOME, "PATH": "/usr/bin:/bin", "BASH_ENV": str(prelude), "GSPO_UPSTREAM_OUT": tmp,
                 **(inputs or {})}
        res = subprocess.run(["bash", str(path.resolve())], cwd=tmp, env=start, capture_output=True, text=True,
                             timeout=60)
        argv_file = Path(tmp) / "argv"
        if res.returncode != 0 or not argv_file.exists():
            raise RuntimeError(f"{path.name} did not reach `python3 -m {VERL_MAIN}` (exit {res.returncode}): "
                               f"{res.stderr.strip()[-500:]}")
        argv = argv_file.read_text(encoding="utf-8").split("\0")[:-1]
        env = dict(item.split("=", 1) for item in (Path(tmp) / "env").read_text().split("\0") if "=" in item)
        ulimit_file = Path(tmp) / "ulimit"
        ulimits = ulimit_file.read_text().splitlines() if ulimit_file.exists() else []
    if argv[:2] != ["-m", VERL_MAIN]:
        raise RuntimeError(f"{path.name} runs python3 {' '.join(argv[:2])}, not -m {VERL_MAIN}")
    shell_own = {"PWD", "SHLVL", "_", "OLDPWD"}
    exports = {k: v for k, v in env.items() if k not in start and k not in shell_own}
    return UpstreamRun(script=path.name, overrides=argv[2:], env=exports, ulimits=ulimits)


@dataclass(frozen=True)
class Difference:
    key: str  # a verl key, `env:NAME`, or `ulimit:nofile`
    upstream: Any  # None: upstream does not set it (verl's default or unset)
    ours: Any

@dataclass
class Comparison:
    differences: list[Difference] = field(default_factory=list)
    same: list[str] = field(default_factory=list)

    def by_key(self) -> dict[str, Difference]:
        return {d.key: d for d in self.differences}


def render(value: Any) -> str:
    """How a value reads in the departures table (YAML-like scalars, `unset` for None)."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return repr(value)
    return str(value)


def _keys(overrides: list[str]) -> list[str]:
    from gspo_cli.engines.verl.compile import override_key

    return [override_key(o) for o in overrides if not o.startswith("~")]


def _plain(value: Any) -> Any:
    from omegaconf import DictConfig, ListConfig, OmegaConf

    if isinstance(value, (DictConfig, ListConfig)):
        return OmegaConf.to_container(value, resolve=True)
    return value


def compare_overrides(upstream: list[str], ours: list[str], *, scope: set[str] | None = None) -> Comparison:
    """Compose both with verl's config; compare every key either sets (or only `scope`, when given)."""
    from omegaconf import OmegaConf

    from gspo_cli.engines.verl.schema_check import compose

    up_cfg, our_cfg = compose(upstream), compose(ours)
    keys = list(dict.fromkeys(_keys(upstream) + _keys(ours)))
    result = Comparison()
    for key in keys:
        if scope is not None and key not in scope:
            continue
        a = _plain(OmegaConf.select(up_cfg, key, default=None))
        b = _plain(OmegaConf.select(our_cfg, key, default=None))
        (result.same.append(key) if a == b else result.differences.append(Difference(key, a, b)))
    return result


def compare_env(upstream: UpstreamRun, ours_env: dict[str, str], ours_nofile: int | None) -> Comparison:
    result = Comparison()
    for name in sorted(set(upstream.env) | set(ours_env)):
        a, b = upstream.env.get(name), ours_env.get(name)
        (result.same.append(f"env:{name}") if a == b else result.differences.append(Difference(f"env:{name}", a, b)))
    if upstream.nofile != ours_nofile:
        result.differences.append(Difference("ulimit:nofile", upstream.nofile, ours_nofile))
    else:
        result.same.append("ulimit:nofile")
    return result



def _upstream_text(value: Any) -> str:
    return render(value).replace(HOME, "${HOME}")


def audit(comparison: Comparison, departures: list[Departure]) -> list[str]:
    """Every problem with a departures list: a difference not listed, a listed value that is not what the
    script or gspo has, a listed key that no longer differs. Empty = the list is exactly the differences."""
    listed = {d.key: d for d in departures}
    found = comparison.by_key()
    problems: list[str] = []
    for key, diff in found.items():
        entry = listed.get(key)
        if entry is None:
            problems.append(f"{key}: upstream {_upstream_text(diff.upstream)}, gspo {render(diff.ours)}: not in "
                            "upstream.departures")
            continue
        if entry.upstream != _upstream_text(diff.upstream):
            problems.append(f"{key}: upstream is {_upstream_text(diff.upstream)}, the departure says {entry.upstream}")
        if not entry.ours.startswith("<") and entry.ours != render(diff.ours):
            problems.append(f"{key}: gspo compiles {render(diff.ours)}, the departure says {entry.ours}")
    problems += [f"{key}: listed as a departure but gspo and upstream agree" for key in listed
                 if key not in found and key in set(comparison.same)]
    return problems


def appended(overrides: list[str], gone: set[str]) -> list[str]:
    """`overrides` with a '+' before each key of `gone` (keys the installed verl no longer has, which Hydra refuses
    in struct mode): composed as appended keys, so they still show up as differences to list as departures."""
    from gspo_cli.engines.verl.compile import override_key

    return [f"+{o}" if not o.startswith(("+", "~")) and override_key(o) in gone else o for o in overrides]


def compare_preset(preset: Preset, script: str | Path, *, inputs: dict[str, str] | None = None,
                   scope: set[str] | None = None, gone: set[str] | None = None) -> Comparison:
    """Overrides, job env and open-files limit of `preset` (compiled with placeholder paths) against `script`;
    `gone`: the script's keys the installed verl lacks (see `appended`)."""
    from gspo_cli.engines.verl.compile import compile_preset

    run = run_script(script, inputs)
    compiled = compile_preset(preset, run_dir="/gspo/runs/RUN", train_file="/gspo/data/train.parquet",
                              val_file="/gspo/data/val.parquet")
    result = compare_overrides(appended(run.overrides, gone or set()), compiled.overrides, scope=scope)
    if scope is None:
        env = compare_env(run, compiled.env_vars, preset.env.nofile)
        result.differences += env.differences
        result.same += env.same
    return result
