"""Shared fixtures: every test gets its own $GSPO_HOME; Ray tests share one real embedded head per session."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(autouse=True)
def gspo_home(tmp_path, monkeypatch) -> Path:
    """An empty $GSPO_HOME per test, and no inherited cluster address."""
    home = tmp_path / "gspo-home"
    home.mkdir()
    monkeypatch.setenv("GSPO_HOME", str(home))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.delenv("GSPO_DEBUG", raising=False)
    return home


@pytest.fixture(scope="session")
def ray_head(tmp_path_factory):
    """A real local Ray head on 127.0.0.1, started through gspo's own embedded-head code and torn down after.

    Tests talk to it with `--address <dashboard_url>` (or RAY_ADDRESS), so their per-test $GSPO_HOME stays empty.
    The head wants its token (gspo_cli/jobs/auth.py): the session names it the way a user of someone else's
    cluster would, RAY_AUTH_MODE=token + RAY_AUTH_TOKEN_PATH, for this process and the `gspo` subprocesses.
    """
    from gspo_cli.jobs import local_head

    home = tmp_path_factory.mktemp("ray-home")
    old = os.environ.get("GSPO_HOME")
    os.environ["GSPO_HOME"] = str(home)
    try:
        record = local_head.start(num_cpus=2)
    finally:
        if old is None:
            os.environ.pop("GSPO_HOME", None)
        else:
            os.environ["GSPO_HOME"] = old
    from gspo_cli.jobs import auth

    saved_auth = {k: os.environ.get(k) for k in auth.AUTH_VARS}
    # Also refreshes Ray's cached auth config when Ray is already imported (verl imports it at collection).
    auth.use_in_process(auth.TOKEN, record.token_file)
    yield record
    for key, value in saved_auth.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    if "ray._raylet" in sys.modules:
        from ray._raylet import AuthenticationTokenLoader, Config

        Config.initialize("")
        AuthenticationTokenLoader.instance().reset_cache()
    os.environ["GSPO_HOME"] = str(home)
    try:
        local_head.stop()
        # gspo never deletes a user's Ray temp dir; this one belongs to the test session.
        temp = Path(record.temp_dir)  # Ray's dir inside gspo's private folder (jobs/local_head.py)
        shutil.rmtree(temp.parent if temp.parent.name.startswith("gspo-ray-") else temp, ignore_errors=True)
    finally:
        if old is None:
            os.environ.pop("GSPO_HOME", None)
        else:
            os.environ["GSPO_HOME"] = old


def run_gspo(*args: str, env: dict[str, str] | None = None, timeout: float = 300, input: str | None = None):
    """Run the real `gspo` console entry in a subprocess; returns CompletedProcess with text output."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "gspo_cli", *args], capture_output=True, text=True, env=full_env, timeout=timeout,
        input=input, cwd=REPO,
    )


@pytest.fixture
def gspo():
    return run_gspo
