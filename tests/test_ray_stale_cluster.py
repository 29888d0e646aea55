"""The Ray tests do not depend on the host's Ray state: with a stale `ray_current_cluster` file (what an earlier
`ray start` leaves in Ray's temp dir, here naming a dead GCS address) the tests that start Ray still pass, because
each starts or names its own cluster (`address="local"`, or the address of the head the test started), never
"whatever cluster this host last ran". A bare `ray.init()` would try to join the dead address instead.

The file is on a path every Ray user of this host shares: whatever was there is put back afterwards (unless a real
`ray start` replaced the planted line meanwhile: then that one is left alone)."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEAD_GCS = "127.0.0.1:9"  # the discard port: nothing answers there
RAY_TESTS = ["tests/eval/test_vllm_backend_ray.py", "tests/data/test_cli.py::test_runs_as_a_ray_job"]


@contextmanager
def planted(path: Path, content: str):
    saved = path.read_bytes() if path.exists() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    try:
        yield
    finally:
        if path.exists() and path.read_text() == content:
            if saved is None:
                path.unlink()
            else:
                path.write_bytes(saved)


@pytest.mark.ray
@pytest.mark.slow
def test_ray_tests_pass_with_a_stale_current_cluster_file_on_the_host():
    from ray._common.utils import get_ray_address_file

    current = Path(get_ray_address_file(None))  # /tmp/ray/ray_current_cluster: where `ray start` records itself
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "GSPO_HOME")}
    with planted(current, DEAD_GCS + "\n"):
        proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *RAY_TESTS],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "skipped" not in proc.stdout
