"""`gspo prepare-data` end to end: the real console entry in a subprocess, a fake hub, and a real Ray job."""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
from pathlib import Path

import pytest
from raw_factories import write_aime_h4

# Out of `make test-fast`: these tests run real training, CLI subprocesses or verl's config compose (5-60 s each).
pytestmark = pytest.mark.slow


def test_local_tiny_then_noop(gspo, gspo_home):
    first = gspo("prepare-data", "--preset", "tiny", "--local", "--json")
    assert first.returncode == 0, first.stderr
    payload = json.loads(first.stdout)
    (report,) = payload["datasets"]
    assert report["source"] == "arith" and report["status"] == "written"
    assert (gspo_home / "data" / "arith" / report["key"] / "train.parquet").exists()  # the preset's keyed set

    again = gspo("prepare-data", "--preset", "tiny", "--local")
    assert again.returncode == 0, again.stderr
    assert "arith: unchanged" in again.stderr and "nothing to do" in again.stderr
    assert "rows out" in again.stdout and "2000" in again.stdout  # the table
    # The table names the real files and says arith is generated (no "<source>" placeholders, no "rows in 0")
    assert f"prepared data in {gspo_home / 'data'}" in " ".join(again.stdout.split())
    assert f"arith: {gspo_home / 'data' / 'arith' / report['key']}" in again.stdout
    assert "train" in again.stdout and "generated" in again.stdout and "<source>" not in again.stdout


def test_local_dapo_table(gspo, dapo_file, tmp_path):
    proc = gspo("prepare-data", "--preset", "qwen3-32b", "--local", "--dataset", "dapo-math-17k",
                "--input", f"dapo-math-17k={dapo_file}", "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    assert "dapo-math-17k: wrote train 11 rows; from 65 rows in; 49 duplicates removed; 1 conflicting" in proc.stderr
    assert len(list((tmp_path / "out" / "dapo-math-17k").glob("*/manifest.json"))) == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["--dataset", "dapo-math-17"], "unknown dataset source 'dapo-math-17'"),
        (["--dataset", "dapo-math-17k", "--input", "dapo.parquet"], "is not NAME=PATH"),
        (["--dataset", "aime-2024", "--input", "dapo-math-17k=x.parquet"], "which this run does not prepare"),
        (["--dataset", "dapo-math-17k", "--input", "dapo-math-17k=/nonexistent/x.parquet"], "does not exist"),
        (["--set", "data.conflict_policy=maybe"], "conflict_policy"),
    ],
)
def test_bad_usage_is_one_clean_line(gspo, args, message):
    proc = gspo("prepare-data", "--preset", "qwen3-32b", "--local", *args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("Error:")


def test_offline_without_a_local_file_says_what_to_download(gspo, gspo_home):
    proc = gspo("prepare-data", "--preset", "qwen3-32b", "--local", "--dataset", "aime-2024",
                env={"HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 2
    url = "https://huggingface.co/datasets/BytedTsinghua-SIA/AIME-2024/resolve/main/data/aime-2024.parquet"
    dest = gspo_home / "data" / "aime-2024" / "raw" / "main" / "data" / "aime-2024.parquet"
    assert f"download {url} and put it at {dest}" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (gspo_home / "data" / "aime-2024").exists()  # nothing left behind

    # Put the file where the hint says: the next run uses it without any network.
    dest.parent.mkdir(parents=True)
    write_aime_h4(dest)
    proc = gspo("prepare-data", "--preset", "qwen3-32b", "--local", "--dataset", "aime-2024", "--json",
                env={"HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["datasets"][0]["input"]["origin"] == "hub-cache"


@pytest.fixture
def fake_hub(tmp_path):
    """A loopback HTTP server answering the two requests huggingface_hub makes for one file (HEAD, GET)."""
    data = write_aime_h4(tmp_path / "served.parquet").read_bytes()
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def _headers(self):
            seen.append(f"{self.command} {self.path}")
            if "/resolve/" not in self.path:
                self.send_response(404)
                self.end_headers()
                return False
            self.send_response(200)
            self.send_header("X-Repo-Commit", "c0ffee" + "0" * 34)
            self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            return True

        def do_HEAD(self):
            self._headers()

        def do_GET(self):
            if self._headers():
                self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


def test_download_from_the_hub(gspo, gspo_home, fake_hub, tmp_path):
    endpoint, seen = fake_hub
    env = {"HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    proc = gspo("prepare-data", "--preset", "qwen3-32b", "--local", "--dataset", "aime-2024", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)["datasets"][0]
    assert report["rows_out"] == 30
    assert report["input"]["origin"] == "hub" and report["input"]["commit"] == "c0ffee" + "0" * 34
    assert any("/datasets/BytedTsinghua-SIA/AIME-2024/resolve/" in s for s in seen)
    raw = gspo_home / "data" / "aime-2024" / "raw" / "main" / "data" / "aime-2024.parquet"
    assert raw.read_bytes() == (tmp_path / "served.parquet").read_bytes()
    assert sorted(p.name for p in raw.parent.iterdir()) == ["aime-2024.parquet"]  # no staging left


@pytest.mark.ray
def test_runs_as_a_ray_job(ray_head, gspo, gspo_home):
    proc = gspo("prepare-data", "--preset", "tiny", "--address", ray_head.dashboard_url, "--json",
                "--set", "data.arith.train_size=40")
    assert proc.returncode == 0, proc.stderr
    (report,) = json.loads(proc.stdout)["datasets"]
    assert report["outputs"]["train"]["rows"] == 40
    # The job wrote into this test's $GSPO_HOME (the submitting side's, passed through the job's env).
    assert Path(gspo_home / "data" / "arith" / report["key"] / "manifest.json").exists()
