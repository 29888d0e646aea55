"""The host a probe looks at: a root path (fixture trees in tests), an environment and a command runner."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class CmdResult:
    rc: int  # 127: not found, 124: timed out
    out: str = ""
    err: str = ""

    @property
    def ok(self) -> bool:
        return self.rc == 0


Runner = Callable[[list[str], Mapping[str, str], float], CmdResult]


def subprocess_runner(argv: list[str], env: Mapping[str, str], timeout: float) -> CmdResult:
    """Run argv with env; never raises for a missing command or a timeout."""
    exe = shutil.which(argv[0], path=env.get("PATH", os.defpath)) if os.sep not in argv[0] else argv[0]
    if exe is None:
        return CmdResult(127, "", f"{argv[0]}: command not found")
    try:
        proc = subprocess.run(
            [exe, *argv[1:]], env=dict(env), capture_output=True, text=True, timeout=timeout,
            stdin=subprocess.DEVNULL, errors="replace",
        )
    except subprocess.TimeoutExpired:
        return CmdResult(124, "", f"{argv[0]} timed out after {timeout:g} s")
    except OSError as exc:
        return CmdResult(126, "", f"{argv[0]}: {exc}")
    return CmdResult(proc.returncode, proc.stdout, proc.stderr)


@dataclass
class Host:
    """Where probes look. `root` prefixes every absolute path (a fixture tree in tests, `/` for real)."""

    root: Path = Path("/")
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    runner: Runner = subprocess_runner
    timeout: float = 10.0
    hostname: str = field(default_factory=socket.gethostname)

    def path(self, p: str | os.PathLike) -> Path:
        """Map an absolute host path under root (`/usr/local/Ascend` -> `<root>/usr/local/Ascend`)."""
        text = os.fspath(p)
        if self.root == Path("/"):
            return Path(text)
        return self.root / text.lstrip("/")

    def unroot(self, p: Path) -> str:
        """The host path of a path under root, for messages and exports."""
        if self.root == Path("/"):
            return str(p)
        try:
            return "/" + str(Path(p).relative_to(self.root))
        except ValueError:
            return str(p)

    def run(self, argv: list[str], timeout: float | None = None) -> CmdResult:
        return self.runner(argv, self.env, self.timeout if timeout is None else timeout)

    def which(self, name: str) -> str | None:
        return shutil.which(name, path=self.env.get("PATH", os.defpath))
