"""The stack probes (env/stack_probe.py) run in a subprocess of the probed interpreter and never crash: a fact that
cannot be read is None, and its cause is kept beside it (`cann_error`, `soc_error`, `errors[dist]`); an absent
package is just None. Real subprocesses of this interpreter, with stand-in torch_npu / acl packages on its path."""

from __future__ import annotations

import sys
from pathlib import Path

from gspo_cli.env.host import Host
from gspo_cli.env.stack_probe import _py_probe, probe_needs


def _host_with(tmp_path: Path, files: dict[str, str]) -> Host:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    host = Host()
    host.env = {**host.env, "PYTHONPATH": str(tmp_path)}
    return host


def test_a_torch_npu_without_a_cann_getter_keeps_why(tmp_path):
    host = _host_with(tmp_path / "a", {"torch_npu/__init__.py": "__version__ = '2.5.1'\n",
                                      "torch_npu/npu/__init__.py": ""})
    out = _py_probe(host, sys.executable, "torch_npu", 60)
    assert out["installed"] and out["version"] == "2.5.1" and out["cann"] is None
    assert "torch_npu.npu.utils: ModuleNotFoundError" in out["cann_error"]
    assert "torch_npu.npu: AttributeError" in out["cann_error"] and "get_cann_version" in out["cann_error"]
    host = _host_with(tmp_path / "b", {"torch_npu/__init__.py": "__version__ = '2.5.1'\n",  # control: it has one
                                      "torch_npu/npu/__init__.py": "",
                                      "torch_npu/npu/utils.py": "def get_cann_version():\n    return '8.1.RC1'\n"})
    out = _py_probe(host, sys.executable, "torch_npu", 60)
    assert out["cann"] == "8.1.RC1" and "cann_error" not in out


def test_an_acl_whose_soc_name_fails_keeps_why(tmp_path):
    rt = "class rt:\n    @staticmethod\n    def get_device_count():\n        return 8, 0\n"
    host = _host_with(tmp_path / "a", {"acl.py": rt + "def get_soc_name():\n    raise RuntimeError('ret 507000')\n"})
    out = _py_probe(host, sys.executable, "acl", 60)
    assert out["device_count"] == 8 and out["soc"] is None and out["soc_error"] == "RuntimeError: ret 507000"
    host = _host_with(tmp_path / "b", {"acl.py": rt + "def get_soc_name():\n    return 'Ascend910B3'\n"})
    out = _py_probe(host, sys.executable, "acl", 60)  # control
    assert out["soc"] == "Ascend910B3" and "soc_error" not in out


def test_a_version_that_cannot_be_asked_keeps_why_an_absent_one_is_none():
    facts = probe_needs(sys.executable, dists=("", "no-such-dist-gspo", "pytest"))
    assert facts["dists"][""] is None and facts["errors"] == {"": "ValueError: A distribution name is required."}
    assert facts["dists"]["no-such-dist-gspo"] is None and facts["dists"]["pytest"]  # absent: None, no error
