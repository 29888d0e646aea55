"""The Low findings of issue #36 (finding 6), one test each (the `runs show` quoting is in test_shell_output.py,
`extends: /etc/shadow` in test_preset_limits.py).

On 1ea5a4f: an eval benchmark named `../..` wrote its results outside the run folder; the verl dry-run printed a
secret given with `--set env.vars.X_TOKEN=...` (and `--json` kept it in `sets`); GSPO_FAULT / GSPO_REWARD_FAULT
acted silently and travelled into Ray jobs; `env doctor` called `MYAPIKEY` secret but job submission did not (it
went into Ray's runtime_env and the run's config.yaml); an `env.vars` name with `=` made `cluster up` end in a
traceback; `jobs status` against an HTTP server that is not Ray's jobs API gave a traceback and `env doctor
--cluster` against a port that is not a Ray GCS hung; secrets files stayed on disk after their job; docs/ascend.md
suggested a group-readable token file that gspo then resets to 0600.
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import stat
import threading
from pathlib import Path

import pytest
import yaml

from gspo_cli.jobs import secret_env

pytestmark = pytest.mark.security

SECRET = "sk-live-4f9c2b7e1d"
API_KEY = "apikey-7d3e9a1f"


def _one_error(proc, says: str, code: int | None = None) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1 and says in errors[0], proc.stderr[-2000:]
    assert proc.returncode == code if code is not None else proc.returncode != 0


# ---------------------------------------------------------------- eval benchmark names


def _arith(path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from gspo_cli.data.arith import make_arith_rows

    path.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(make_arith_rows("val", 4, 4, ["+"], 0, "plain")), path / "val.parquet")
    return path / "val.parquet"


@pytest.mark.parametrize("name", ["../../../escaped", "a/b", "..", ".hidden"])
def test_an_eval_benchmark_name_never_leaves_the_eval_folder(name, tmp_path, gspo_home, gspo_at):
    data = _arith(tmp_path / "data")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    proc = gspo_at("eval", name, "--preset", "tiny", "--model", "builtin:tiny", "--local", "--limit", "1",
                   "--data", str(data), "--backend", "hf", timeout=600)
    _one_error(proc, f"bad benchmark name {name!r}", 2)
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert [p for p in after if p not in before and "models" not in p.parts] == []


# ---------------------------------------------------------------- --set secrets in the dry-run


@pytest.mark.parametrize("extra", [[], ["--json"], ["--verbose"]], ids=["text", "json", "verbose"])
def test_verl_dry_run_never_prints_a_secret_given_with_set(extra, gspo_home, gspo_at):
    proc = gspo_at("train", "--preset", "qwen3-0.6b-1x1", "--dry-run", *extra,
                   "--set", f"env.vars.X_TOKEN={SECRET}", "--set", f"env.vars.MYAPIKEY={API_KEY}")
    assert "Traceback" not in proc.stderr and proc.returncode in (0, 2), proc.stderr[-2000:]
    assert SECRET not in proc.stdout + proc.stderr and API_KEY not in proc.stdout + proc.stderr
    if extra == ["--json"]:
        sets = json.loads(proc.stdout)["sets"]
        assert sets == ["env.vars.X_TOKEN=<redacted>", "env.vars.MYAPIKEY=<redacted>"]
    else:
        assert "env.vars.X_TOKEN=<redacted>" in proc.stdout


def test_a_set_error_never_echoes_a_secret(gspo_at):
    proc = gspo_at("presets", "show", "tiny", "--set", f"env.vars.X_TOKEN={SECRET}", "--set", "env.vars=[1]")
    assert proc.returncode == 2 and SECRET not in proc.stderr
    proc = gspo_at("presets", "show", "tiny", "--set", f"env.vars.HF_TOKEN={SECRET}", "--set", "env.secrets=7")
    assert proc.returncode == 2 and SECRET not in proc.stderr, proc.stderr
    proc = gspo_at("presets", "show", "tiny", "--set", "env.vars.PIN_TOKEN=918273645")  # a number: not a string
    assert proc.returncode == 2 and "918273645" not in proc.stderr and "env.vars.PIN_TOKEN" in proc.stderr


# ---------------------------------------------------------------- one secret rule


@pytest.mark.parametrize("name,secret", [("MYAPIKEY", True), ("HF_TOKEN", True), ("DB_PASSWD", True),
                                         ("AWS_CREDENTIALS_FILE", True), ("X_SECRETS", True), ("api_key", True),
                                         ("TOKENIZERS_PARALLELISM", False), ("HCCL_EXEC_TIMEOUT", False),
                                         ("VLLM_USE_V1", False)])
def test_one_secret_rule_for_doctor_jobs_and_run_folders(name, secret):
    from gspo_cli.engines.verl.compile import redact
    from gspo_cli.env.probes import env_snapshot

    public, hidden = secret_env.split({name: "v4lue-x"})
    assert (name in hidden) is secret and (name in public) is not secret  # job submission
    assert (env_snapshot({name: "v4lue-x"}, (name,))[name] == "***") is secret  # env doctor
    assert (redact({name: "v4lue-x"})[name] == "<redacted>") is secret  # the verl dry-run
    saved = secret_env.redact_preset({"env": {"vars": {name: "v4lue-x"}, "secrets": []}})
    assert (saved["env"]["vars"][name] == "<redacted>") is secret  # run folders' config.yaml


def test_myapikey_never_reaches_the_run_config(gspo_home, tmp_path):
    from gspo_cli.config.presets import load_preset
    from gspo_cli.engines.native.launch import write_config
    from gspo_cli.engines.request import TrainRequest

    preset = load_preset("tiny", [f"env.vars.MYAPIKEY={API_KEY}", "env.vars.TOKENIZERS_PARALLELISM='false'"])
    write_config(TrainRequest(preset=preset, preset_ref="tiny"), tmp_path)
    text = (tmp_path / "config.yaml").read_text()
    assert API_KEY not in text and "MYAPIKEY: <redacted>" in text and "TOKENIZERS_PARALLELISM: 'false'" in text


# ---------------------------------------------------------------- fault switches


def test_fault_switches_announce_themselves_and_stay_out_of_jobs(monkeypatch, gspo_at):
    from gspo_cli.jobs import client

    proc = gspo_at("presets", "list", env={"GSPO_FAULT": "nan@2", "GSPO_REWARD_FAULT": "error:3"})
    assert "fault injection is ON: GSPO_FAULT='nan@2'" in proc.stderr
    assert "fault injection is ON: GSPO_REWARD_FAULT='error:3'" in proc.stderr
    monkeypatch.setenv("GSPO_FAULT", "nan@2")
    monkeypatch.setenv("GSPO_REWARD_FAULT", "error:3")
    monkeypatch.delenv("GSPO_FAULTS_TO_JOBS", raising=False)
    env = client.job_env({})
    assert "GSPO_FAULT" not in env and "GSPO_REWARD_FAULT" not in env
    monkeypatch.setenv("GSPO_FAULTS_TO_JOBS", "1")  # what the fault tests set, next to the switch
    env = client.job_env({})
    assert env["GSPO_FAULT"] == "nan@2" and env["GSPO_REWARD_FAULT"] == "error:3"


def test_a_job_announces_a_fault_switch_in_its_log(monkeypatch, capsys):
    from gspo_cli.jobs import entry

    monkeypatch.setenv("GSPO_FAULT", "crash@3")
    kinds = {"noop": entry.JobKind(load=lambda: (lambda argv: 0))}
    assert entry.main(kinds, ["noop"]) == 0
    assert "job noop: fault injection is ON: GSPO_FAULT='crash@3'" in capsys.readouterr().err


# ---------------------------------------------------------------- env.vars names at cluster up


def test_cluster_up_with_an_equals_sign_in_a_variable_name_is_one_line(gspo_home, gspo_at):
    path = gspo_home / "presets" / "eq.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump({"extends": "tiny", "name": "eq", "env": {"vars": {"A=B": "1"}}}))
    proc = gspo_at("cluster", "up", "--preset", str(path), "--wait", "0", "--num-cpus", "1")
    _one_error(proc, "'A=B' is not a valid environment variable name", 2)
    assert not list((gspo_home / "ray" / "nodes").glob("*.json")) if (gspo_home / "ray" / "nodes").exists() else True


# ---------------------------------------------------------------- addresses that are not Ray


class NotRay(http.server.BaseHTTPRequestHandler):
    """Answers /api/version as Ray's dashboard does (so the jobs SDK goes on), and HTML everywhere else."""

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if self.path.startswith("/api/version"):
            body = json.dumps({"version": "4", "ray_version": "2.60.0", "ray_commit": "x", "session_name": "s"})
        else:
            body = "<html>a web app, not Ray</html>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    do_GET = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, *args):
        pass


@pytest.fixture
def not_ray():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotRay)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_port():
    """A TCP port that accepts connections and never says a word."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        sock.settimeout(0.5)
        while not stop.is_set():
            try:
                held.append(sock.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"127.0.0.1:{sock.getsockname()[1]}"
    stop.set()
    thread.join(timeout=5)
    for conn in held:
        conn.close()
    sock.close()


@pytest.mark.parametrize("command", [["jobs", "status", "some-job"], ["jobs", "logs", "some-job"],
                                     ["jobs", "stop", "some-job"], ["jobs", "list"]])
def test_jobs_commands_against_an_http_server_that_is_not_ray(command, not_ray, gspo_at):
    proc = gspo_at(*command, "--address", f"http://{not_ray}")
    _one_error(proc, f"http://{not_ray}")


@pytest.mark.parametrize("which", ["silent TCP port", "HTTP server"])
def test_doctor_cluster_against_a_port_that_is_not_a_gcs_is_one_line(which, silent_port, not_ray, gspo_at):
    address = silent_port if which == "silent TCP port" else not_ray
    # On 1ea5a4f both hung in ray.init's retries (killed after 120 s); the timeout here only bounds a hang.
    proc = gspo_at("env", "doctor", "--cluster", "--address", address, timeout=150)
    _one_error(proc, f"{address} (--address) is not a Ray GCS", 1)


# ---------------------------------------------------------------- secrets files end with their job


def test_retire_deletes_the_file_and_logs_stay_redacted(gspo_home):
    path = secret_env.write("job-1", {"HF_TOKEN": SECRET, "SHORT": "ab"})
    assert path.is_file()
    log = f"step 1 HF_TOKEN={SECRET} done; again {SECRET}\nab ordinary words"
    assert secret_env.scrub(log, "job-1") == "step 1 HF_TOKEN=<redacted> done; again <redacted>\nab ordinary words"
    assert secret_env.retire(path) and not path.exists()
    left = list(secret_env.secrets_dir().iterdir())
    assert [p.name for p in left] == ["job-1.scrub.json"] and stat.S_IMODE(left[0].stat().st_mode) == 0o600
    assert SECRET not in left[0].read_text()
    assert secret_env.scrub(log, "job-1") == "step 1 HF_TOKEN=<redacted> done; again <redacted>\nab ordinary words"


CHILD = """
import sys
from gspo_cli.jobs import entry
sys.exit(entry.main({"attempt": entry.JobKind(load=lambda: (lambda argv: 0))}, ["attempt"]))
"""


def test_the_job_driver_retires_its_secrets_file_and_its_children_do_not(gspo_home, monkeypatch):
    """The driver (`python -m gspo_cli.job_kinds CMD`) deletes the file when the job ends; an attempt the job
    wrapper runs (the same entry, in a child process) must not, Ray workers still read it."""
    import subprocess
    import sys

    from gspo_cli.jobs import entry

    path = secret_env.write("job-2", {"HF_TOKEN": SECRET})
    monkeypatch.setenv(secret_env.FILE_VAR, str(path))
    monkeypatch.delenv(entry.SECRETS_OWNER_VAR, raising=False)
    seen = {}

    def driver(argv):
        child = subprocess.run([sys.executable, "-c", CHILD], env=dict(os.environ), capture_output=True, text=True)
        seen["child"] = (child.returncode, path.exists())
        return 0

    assert entry.main({"outer": entry.JobKind(load=lambda: driver)}, ["outer"]) == 0
    assert seen["child"] == (0, True), seen  # the attempt ended, the file is still there
    assert not path.exists() and os.environ["HF_TOKEN"] == SECRET  # the driver ended: gone


@pytest.mark.ray
@pytest.mark.slow
def test_a_real_jobs_secrets_file_is_gone_when_it_ends(ray_head, gspo_home, gspo_at):
    data = yaml.safe_load((Path(__file__).resolve().parents[2] / "presets" / "tiny.yaml").read_text())
    data.setdefault("env", {}).setdefault("vars", {})["HF_TOKEN"] = SECRET
    preset = gspo_home / "presets" / "withsecret.yaml"
    preset.parent.mkdir(parents=True, exist_ok=True)
    preset.write_text(yaml.safe_dump(data))
    proc = gspo_at("prepare-data", "--preset", str(preset), "--address", ray_head.dashboard_url, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    left = sorted(p.name for p in secret_env.secrets_dir().iterdir())
    assert left and all(name.endswith(".scrub.json") for name in left), left
    assert all(SECRET not in (secret_env.secrets_dir() / n).read_text() for n in left)


# ---------------------------------------------------------------- docs/ascend.md and the token's mode


def test_the_docs_never_suggest_a_token_mode_gspo_refuses(gspo_home):
    from gspo_cli.jobs import auth

    text = (Path(__file__).resolve().parents[2] / "docs" / "ascend.md").read_text()
    assert "0640" not in text and "a group with" not in text
    assert "RAY_AUTH_TOKEN_PATH=~/.ray-cluster-token" in text  # the copy-in-your-home advice instead
    # why: gspo puts the shared token back to 0600 whenever `cluster up` reuses it
    path, _ = auth.ensure_cluster_token()
    os.chmod(path, 0o640)
    auth.ensure_cluster_token()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
