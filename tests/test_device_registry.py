"""One device registry (gspo_cli/config/devices.py): each kind's entry carries its facts, each purpose's `auto` rule
is stated once by name (`AUTO_RULES`), the schema's device values come from the registry, and no layer outside
config names a kind to look it up (it asks a question: the Ascend kind, the host's CPU, verl's default)."""

from __future__ import annotations

import ast
import sys
import typing
from dataclasses import replace
from pathlib import Path

import pytest

from gspo_cli.config import devices
from gspo_cli.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1] / "gspo_cli"


def test_each_kind_carries_its_facts_and_the_questions_find_them():
    assert list(devices.DEVICES) == ["npu", "cuda", "cpu"]
    npu, cuda, cpu = (devices.DEVICES[n] for n in ("npu", "cuda", "cpu"))
    assert (npu.torch_package, npu.ray_resource, npu.smi, npu.ascend) == ("torch_npu", "NPU", "npu-smi", True)
    assert (cuda.torch_package, cuda.ray_resource, cuda.smi) == (None, "GPU", "nvidia-smi")
    assert cpu.ray_resource is None and not cpu.accelerator and cpu.unusable == ""
    assert devices.ascend() is npu and devices.host_cpu() is cpu and devices.verl_default() is cuda
    assert devices.accelerators() == [npu, cuda]
    assert devices.spoken() == "cpu, cuda or npu"
    with pytest.raises(ValueError, match=r"unknown device 'tpu' \(known: npu, cuda, cpu, auto\)"):
        devices.get("tpu")
    with pytest.raises(ValueError, match="device 'cpu' registered twice"):
        devices.DEVICES.add("cpu", cpu)


def test_one_auto_rule_per_purpose_named_and_made_of_registered_kinds():
    assert set(devices.AUTO_RULES) == {"verl", "torch"}
    assert [d.name for d in devices.AUTO_RULES["verl"].kinds()] == ["cuda", "npu"]  # platform_manager's order
    assert devices.AUTO_RULES["verl"].fallback == "cuda"
    assert [d.name for d in devices.AUTO_RULES["torch"].kinds()] == ["npu", "cuda", "cpu"]


def test_verls_rule_says_why_in_the_words_of_its_probes():
    """The `why` is in the dry-run JSON and the job file: the words the hand-written rule said, each case."""
    smi = devices.verl_auto(which=lambda name: f"/usr/bin/{name}" if name == "nvidia-smi" else None)
    assert smi == ("cuda", "nvidia-smi is on this host's PATH (verl probes cuda first: platform_cuda.py)")
    npu = devices.verl_auto(which=lambda _: None, installed={"torch_npu"}.__contains__)
    assert npu == ("npu", "torch_npu is installed here (verl then picks npu: platform_npu.py)")
    none = devices.verl_auto(which=lambda _: None, installed=lambda _: False)
    assert none == ("cuda", "neither nvidia-smi nor torch_npu on this host: verl falls back to cuda")
    # control: npu-smi on PATH is not what verl looks for (it imports torch_npu), so it does not pick npu
    assert devices.verl_auto(which=lambda n: n if n == "npu-smi" else None, installed=lambda _: False)[0] == "cuda"


def test_the_schemas_device_values_are_the_registrys():
    from gspo_cli.config.eval_schema import EvalSection
    from gspo_cli.config.presets import load_preset
    from gspo_cli.config.schema import ClusterSection, TrainerSection

    kinds = set(devices.DEVICES) | {devices.AUTO}
    for section in (ClusterSection, TrainerSection, EvalSection):
        assert set(typing.get_args(section.model_fields["device"].annotation)) == kinds, section
    with pytest.raises(ConfigError, match=r"Input should be 'npu', 'cuda', 'cpu' or 'auto' \(got 'tpu'\)"):
        load_preset("tiny", ["cluster.device=tpu"])
    with pytest.raises(ConfigError, match=r"Input should be 'auto', 'cpu', 'cuda' or 'npu' \(got 'tpu'\)"):
        load_preset("tiny", ["trainer.device=tpu"])


def test_the_torch_rule_asks_in_its_order_and_a_named_kind_says_why_not(monkeypatch):
    from gspo_cli.models import device

    asked = []

    def only_cuda(kind):
        asked.append(kind.name)
        return None if kind.name == "cuda" else "not here"

    monkeypatch.setattr(device, "unusable_because", only_cuda)
    assert device.detect_device("auto") == "cuda" and asked == ["npu", "cuda"]
    assert device.detect_device("npu") == "npu"  # named: not probed here (resolve_device checks it)
    monkeypatch.undo()
    with pytest.raises(ConfigError) as info:
        device.resolve_device("npu")  # torch-npu is never installed in dev/CI
    assert info.value.message == ("trainer.device is npu but torch_npu / an NPU is not available (torch-npu is "
                                  "installed only on Ascend hosts)")
    assert info.value.hint == "use trainer.device=auto or cpu"


def test_a_vendor_package_that_fails_to_load_is_said_with_its_cause(tmp_path, monkeypatch):
    """torch_npu where CANN is absent fails at import: the kind is not usable, and the reason carries the cause."""
    from gspo_cli.models import device

    (tmp_path / "broken_vendor_torch.py").write_text("raise OSError('libascendcl.so: cannot open shared object')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    broken = replace(devices.ascend(), torch_package="broken_vendor_torch")
    why = device.unusable_because(broken)
    assert why == (f"{broken.unusable}; broken_vendor_torch failed to load: "
                   "libascendcl.so: cannot open shared object")
    sys.modules.pop("broken_vendor_torch", None)
    assert device.unusable_because(devices.host_cpu()) is None  # control: the host CPU is always usable


def _kind_lookups(source: str) -> list[str]:
    """`devices.get("npu")`, `DEVICES["cuda"]`, `devices.kind("cpu")`: a kind looked up by its name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            receiver, _, method = ast.unparse(node.func).rpartition(".")
            if receiver.endswith("devices") and method in ("get", "kind") and node.args[0].value in devices.DEVICES:
                found.append(ast.unparse(node))
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            if ast.unparse(node.value).endswith("DEVICES") and node.slice.value in devices.DEVICES:
                found.append(ast.unparse(node))
    return found


def test_no_layer_outside_config_looks_a_kind_up_by_name():
    found = {str(p.relative_to(ROOT)): hits for p in sorted(ROOT.rglob("*.py"))
             if p.relative_to(ROOT).parts[0] != "config" and (hits := _kind_lookups(p.read_text(encoding="utf-8")))}
    assert not found, f"ask config/devices.py a question (ascend(), host_cpu(), ...) instead: {found}"
    # control: the look-ups this replaced, as they were written, are caught; the questions are not
    before = ('NPU_RESOURCE = str(devices.get("npu").ray_resource)\nSLOT = devices.get("cuda")\n'
              'x = _devices.DEVICES["cpu"].vllm_distribution\n')
    assert len(_kind_lookups(before)) == 3
    assert _kind_lookups("NPU_RESOURCE = str(devices.ascend().ray_resource)\nn = facts.get('npu')\n") == []
