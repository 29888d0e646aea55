"""Secrets in a preset's env.vars reach the job (driver and Ray workers) but no file another user can read.

One real job on the session head carries HF_TOKEN (by its suffix) and MY_PASSPHRASE (marked in env.secrets);
the driver and a Ray worker report a hash of what they see. Then every file under the head's Ray temp dir, the
head's home and this test's $GSPO_HOME is searched for both values: the only place they may be is the job's
secrets file (0600, in a 0700 folder).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shlex
import stat
import sys
import time
from pathlib import Path

import pytest
import yaml

from gspo_cli.jobs import secret_env

pytestmark = [pytest.mark.security, pytest.mark.ray]

PROBE = """
import hashlib, os, ray
from gspo_cli.jobs import secret_env
secret_env.load()
h = lambda name: hashlib.sha256(os.environ.get(name, "").encode()).hexdigest()
print("driver", h("HF_TOKEN"), h("MY_PASSPHRASE"), flush=True)
ray.init(address=os.environ["RAY_ADDRESS"])  # the job's own cluster, set by Ray
@ray.remote(num_cpus=0)
def seen():
    return h("HF_TOKEN"), h("MY_PASSPHRASE")
print("worker", *ray.get(seen.remote()), flush=True)
"""


def _sha(v: str) -> str:
    return hashlib.sha256(v.encode()).hexdigest()


def _search(roots, values):
    searched, hits = 0, []
    for root in roots:
        for dirpath, _, files in os.walk(root):
            for name in files:
                path = Path(dirpath) / name
                try:
                    data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
                except OSError:
                    continue
                searched += 1
                hits += [str(path) for v in values if v.encode() in data]
    return searched, hits


def test_secrets_reach_the_job_and_no_readable_file(ray_head, gspo_home, gspo_at):
    from gspo_cli.jobs import client as jobs
    from gspo_cli.jobs.target import ClusterTarget

    token, phrase = f"hf_{secrets.token_hex(12)}", f"pp-{secrets.token_hex(12)}"
    env = {"HF_TOKEN": token, "MY_PASSPHRASE": phrase, "GSPO_HOME": str(gspo_home)}
    target = ClusterTarget(ray_head.dashboard_url, ray_head.address, embedded=False, source="test", auth="token",
                           token_file=ray_head.token_file)
    entry = f"{sys.executable} -c {shlex.quote(PROBE)}"
    job_id = jobs.submit(target, entry, job_id=f"sec-probe-{secrets.token_hex(3)}", env_vars=env,
                         secret_names=["MY_PASSPHRASE"])
    client = jobs.client(target)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and str(client.get_job_status(job_id)).split(".")[-1] not in (
            "SUCCEEDED", "FAILED", "STOPPED"):
        time.sleep(1)
    raw_logs = client.get_job_logs(job_id)
    assert f"driver {_sha(token)} {_sha(phrase)}" in raw_logs, raw_logs[-2000:]
    assert f"worker {_sha(token)} {_sha(phrase)}" in raw_logs, raw_logs[-2000:]
    info = client.get_job_info(job_id)
    assert token not in json.dumps(info.runtime_env or {}) and phrase not in json.dumps(info.runtime_env or {})

    # A real gspo job through a preset with the same secrets (prepare-data), then `jobs logs` and `runs show`.
    data = yaml.safe_load((Path(__file__).resolve().parents[2] / "presets" / "tiny.yaml").read_text())
    data.setdefault("env", {}).setdefault("vars", {}).update({"HF_TOKEN": token, "MY_PASSPHRASE": phrase})
    data["env"]["secrets"] = ["MY_PASSPHRASE"]
    preset = gspo_home / "presets" / "withsecrets.yaml"
    preset.parent.mkdir(parents=True, exist_ok=True)
    preset.write_text(yaml.safe_dump(data))
    proc = gspo_at("prepare-data", "--preset", str(preset), "--address", ray_head.dashboard_url, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    logs = gspo_at("jobs", "logs", job_id, "--address", ray_head.dashboard_url)
    assert logs.returncode == 0 and token not in logs.stdout + logs.stderr
    preset.unlink()  # the user's own preset file holds the values by design; everything gspo wrote must not

    roots = [Path(ray_head.temp_dir), gspo_home, Path(ray_head.log_file).parent.parent]
    searched, hits = _search(roots, [token, phrase])
    allowed = secret_env.secrets_dir()
    outside = [h for h in hits if Path(h).parent != allowed]
    print(f"secrets grep: {searched} files under {', '.join(map(str, roots))}; hits outside the 0600 "
          f"secrets files: {len(outside)}; hits inside: {len(hits) - len(outside)}")
    assert searched > 50 and outside == []
    for h in hits:  # the secrets files themselves: 0600 in a 0700 folder
        assert stat.S_IMODE(os.stat(h).st_mode) == 0o600 and stat.S_IMODE(allowed.stat().st_mode) == 0o700
