"""Hub models users can reach (issue 44): `model.revision` pinned, `gspo prepare-model` fetches the model once with
the hub's real client (modelscope, huggingface_hub) from a loopback hub (hub_servers.py) serving a tiny random-init
Qwen3 built here (config.json, safetensors, a tokenizer trained offline: models/tiny.py), and both engines load
the prepared folder: the native engine trains a step from it, verl's compiled model.path is it."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from hub_servers import LoopbackHub, Repo, serve

from gspo_cli.config.presets import load_preset
from gspo_cli.errors import ConfigError, GspoError
from gspo_cli.models import hub_fetch, hub_model

REPO, REV, COMMIT = "tiny-org/tiny-qwen3", "v1.0", "5" * 40
# In the repo but never fetched: a pickle (can run code when loaded) and the repo's Python (trust_remote_code off).
UNSAFE = {"pytorch_model.bin": b"\x80\x04pickled", "modeling_tiny.py": b"import os\n"}


@pytest.fixture(scope="module")
def model_files(tmp_path_factory) -> dict[str, bytes]:
    from gspo_cli.models.tiny import ensure_tiny_model

    folder = ensure_tiny_model(tmp_path_factory.mktemp("served") / "tiny", name="tiny")
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def hub(model_files, monkeypatch, tmp_path):
    served = LoopbackHub({REPO: Repo({**model_files, **UNSAFE}, {REV: COMMIT, COMMIT: COMMIT})})
    server = serve(served)
    monkeypatch.setenv("MODELSCOPE_CACHE", str(tmp_path / "ms-cache"))
    yield served
    server.shutdown()
    server.server_close()


def _preset(tmp_path: Path, hub_name: str, endpoint: str, revision: str | None = REV, base: str = "tiny",
            repo: str = REPO) -> Path:
    rev = f"\n  revision: '{revision}'" if revision else ""
    path = tmp_path / f"{hub_name}-{base}.yaml"
    path.write_text(f"name: hub-{base}\nextends: {base}\nhub:\n  name: {hub_name}\n  endpoint: {endpoint}\n"
                    f"model:\n  path: {repo}{rev}\npaths:\n  data_dir: {tmp_path / 'data'}\n"
                    f"  runs_dir: {tmp_path / 'runs'}\n")
    return path


def _folder(home: Path, hub_name: str) -> Path:
    return home / "models" / "hub" / hub_name / REPO / REV


# ------------------------------------------------------------------ ModelScope: prepare, reuse, train, compile


@pytest.mark.slow
def test_modelscope_model_prepared_once_then_trained_on_by_the_native_engine(gspo, gspo_home, tmp_path, hub,
                                                                             model_files):
    preset = _preset(tmp_path, "modelscope", hub.url)
    env = {"MODELSCOPE_CACHE": str(tmp_path / "ms-cache")}
    proc = gspo("prepare-model", "--preset", str(preset), "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    folder = _folder(gspo_home, "modelscope")
    assert (report["status"], report["folder"], report["revision"]) == ("prepared", str(folder), REV)
    assert any(f"/api/v1/models/{REPO}/repo/files?Revision={REV}" in s for s in hub.seen), hub.seen
    manifest = json.loads((folder / "gspo-model.json").read_text())
    assert (manifest["hub"], manifest["endpoint"], manifest["repo"]) == ("modelscope", hub.url, REPO)
    assert set(manifest["files"]) == set(model_files)  # no pickle, no *.py: neither fetched
    for name, entry in manifest["files"].items():
        assert (folder / name).read_bytes() == model_files[name] and entry["size"] == len(model_files[name])
    assert sorted(p.name for p in folder.iterdir()) == sorted([*model_files, "gspo-model.json"])
    assert [p.name for p in folder.parent.iterdir()] == [REV]  # no staging folder left beside it

    asked = len(hub.seen)
    again = gspo("prepare-model", "--preset", str(preset), env=env)
    assert again.returncode == 0 and again.stderr.startswith(f"unchanged: {REPO}@{REV} from modelscope"), again.stderr
    assert len(hub.seen) == asked  # no request: the files were checked against the manifest's sha256

    data = gspo("prepare-data", "--preset", str(preset), "--local", env=env)
    assert data.returncode == 0, data.stderr
    steps = ["--set", "trainer.total_training_steps=1", "--set", "trainer.val_before_train=false",
             "--set", "data.train_batch_size=4", "--set", "rollout.n=2", "--set", "actor.ppo_mini_batch_size=2"]
    train = gspo("train", "--preset", str(preset), "--local", "--json", "--run-name", "ms", *steps, env=env)
    assert train.returncode == 0, train.stderr[-3000:]
    assert json.loads(train.stdout)["final_step"] == 1
    assert len(hub.seen) == asked  # the engine loaded the prepared folder: nothing downloaded


def _native_model_row(preset_file: Path):
    from gspo_cli.engines import TrainRequest
    from gspo_cli.engines.native.dryrun import checks

    req = TrainRequest(preset=load_preset(str(preset_file)), preset_ref=str(preset_file), run_name="dry")
    return next(c for c in checks(req) if c.name == "model")


def _verl_plan(preset_file: Path):
    from gspo_cli.engines.verl import launch

    plan = launch.make_plan(str(preset_file), [], run_name="dry", schema=False, env_python=None)
    path = next(o for o in plan.compiled.overrides if o.startswith("actor_rollout_ref.model.path="))
    return path.split("=", 1)[1], next(c for c in plan.report.checks if c.name == "hub model")


def test_both_dry_runs_name_the_folder_or_the_command(gspo_home, tmp_path, hub):
    native, verl = _preset(tmp_path, "modelscope", hub.url), _preset(tmp_path, "modelscope", hub.url, base="tiny-verl")
    folder = _folder(gspo_home, "modelscope")
    for row, ref in ((_native_model_row(native), native), (_verl_plan(verl)[1], verl)):  # not prepared: an error
        assert row.status == "error" and f"ModelScope model {REPO}@{REV} is not prepared ({folder} has" in row.message
        assert row.fix == f"run: gspo prepare-model --preset {ref}"  # the exact command, with the preset as given
    assert _verl_plan(verl)[0] == str(folder)  # verl never downloads: its path is the folder, prepared or not
    hub_fetch.prepare(load_preset(str(native)))
    row = _native_model_row(native)
    assert row.status == "ok" and row.message == f"ModelScope model {REPO}@{REV} prepared: {folder}"
    compiled, row = _verl_plan(verl)
    assert compiled == str(folder) and row.status == "ok"
    assert len(hub.seen) > 0


# ------------------------------------------------------------------ controls: one line, nothing written


@pytest.mark.parametrize("repo, revision, said", [
    (REPO, None, "model tiny-org/tiny-qwen3: a download from ModelScope needs a pinned revision (model.revision: "
                 "none is set)"),
    (REPO, "master", "(model.revision: 'master' is a branch that moves)"),
    (REPO, "v9.9", f"model.revision v9.9 is not in {REPO} on ModelScope http://127.0.0.1:"),
    ("tiny-org/nope", REV, "tiny-org/nope@v1.0 is not on ModelScope http://127.0.0.1:"),
])
def test_modelscope_refusals(gspo_home, tmp_path, hub, repo, revision, said):
    with pytest.raises(GspoError) as err:
        hub_fetch.prepare(load_preset(str(_preset(tmp_path, "modelscope", hub.url, revision, repo=repo))))
    assert said in err.value.message and "\n" not in err.value.message and err.value.exit_code == 2
    assert bool(hub.seen) == (revision not in (None, "master"))  # an unpinned revision: refused before any request
    assert not (gspo_home / "models").exists()  # nothing half-written


def test_revision_is_a_path_component():
    with pytest.raises(GspoError, match=r"model.revision.*'../x' is not a tag or commit id"):
        load_preset("tiny", ["model.path=org/m", "model.revision=../x"])


def test_tampered_files_are_caught(gspo_home, tmp_path, hub):
    """On use (dry-run, launch): sizes and unlisted code files; on `prepare-model` again: every sha256."""
    preset = load_preset(str(_preset(tmp_path, "modelscope", hub.url)))
    hub_fetch.prepare(preset)
    folder = _folder(gspo_home, "modelscope")
    weights = folder / "model.safetensors"
    original = weights.read_bytes()
    weights.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))  # same size, one bit flipped
    with pytest.raises(GspoError, match="model.safetensors does not match its sha256 in the manifest") as err:
        hub_fetch.prepare(preset)
    assert "--force" in (err.value.hint or "")
    weights.write_bytes(original[:100])  # truncated: caught on use, without hashing
    with pytest.raises(ConfigError, match="the prepared folder is damaged: model.safetensors is missing or its size"):
        hub_model.require_prepared(hub_model.of(preset), None, preset)
    weights.write_bytes(original)
    (folder / "modeling_tiny.py").write_text("import os\n")  # planted code, trust_remote_code off
    with pytest.raises(ConfigError, match="modeling_tiny.py can run code and is not in the manifest"):
        hub_model.require_prepared(hub_model.of(preset), None, preset)
    (folder / "modeling_tiny.py").unlink()
    assert hub_fetch.prepare(preset)["status"] == "unchanged"  # the control: the intact folder passes
    assert hub_fetch.prepare(preset, force=True)["status"] == "prepared"


# ------------------------------------------------------------------ Hugging Face (or a mirror) through the same door


def test_huggingface_revision_resolves_to_its_commit(gspo_home, tmp_path, hub, model_files, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    preset = load_preset(str(_preset(tmp_path, "huggingface", hub.url)))
    report = hub_fetch.prepare(preset)
    folder = _folder(gspo_home, "huggingface")
    assert report["resolved_commit"] == COMMIT and report["folder"] == str(folder)
    assert f"GET /api/models/{REPO}/revision/{REV}" in hub.seen
    assert any(s.startswith(f"GET /{REPO}/resolve/{COMMIT}/model.safetensors") for s in hub.seen)  # at the commit
    assert sorted(p.name for p in folder.iterdir()) == sorted([*model_files, "gspo-model.json"])  # no .cache/


@pytest.mark.parametrize("repo, revision, said", [
    (REPO, "v9.9", f"model.revision v9.9 is not in {REPO} on the Hugging Face Hub http://127.0.0.1:"),
    ("tiny-org/nope", REV, "tiny-org/nope@v1.0 is not on the Hugging Face Hub http://127.0.0.1:"),
])
def test_huggingface_refusals(gspo_home, tmp_path, hub, monkeypatch, repo, revision, said):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with pytest.raises(GspoError) as err:
        hub_fetch.prepare(load_preset(str(_preset(tmp_path, "huggingface", hub.url, revision, repo=repo))))
    assert said in err.value.message and "\n" not in err.value.message
    assert not (gspo_home / "models").exists()


def test_unreachable_hub_is_one_line(gspo_home, tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(GspoError) as err:
        hub_fetch.prepare(load_preset(str(_preset(tmp_path, "huggingface", f"http://127.0.0.1:{port}"))))
    assert err.value.message.startswith(f"cannot fetch the Hugging Face Hub model {REPO}@{REV} from http://127.0.0.1:")
    assert "mirror" in (err.value.hint or "") and not (gspo_home / "models").exists()


def test_a_damaged_manifest_reads_as_empty_and_a_bug_in_the_reader_is_not_hidden(tmp_path, monkeypatch):
    (tmp_path / hub_model.MANIFEST).write_text("{not json")
    assert hub_model.read_manifest(tmp_path) == {}  # damaged: `problem` says so, as before
    (tmp_path / hub_model.MANIFEST).write_text(json.dumps({"format": 1}))
    assert hub_model.read_manifest(tmp_path) == {"format": 1}  # control: a readable one

    def broken(path):
        raise TypeError("a bug in the reader")

    monkeypatch.setattr("gspo_cli.untrusted.read_json", broken)
    with pytest.raises(TypeError, match="a bug in the reader"):
        hub_model.read_manifest(tmp_path)


def test_the_repo_question_after_a_404_fails_quietly_on_hub_errors_only(gspo_home, tmp_path, hub, monkeypatch):
    from modelscope_hub import HubApi
    from modelscope_hub.errors import NetworkError

    model = hub_model.of(load_preset(str(_preset(tmp_path, "modelscope", hub.url))))
    assert hub_fetch._known_repo(model) is True  # control: the loopback hub answers the question
    assert hub_fetch._known_repo(hub_model.of(load_preset(str(_preset(tmp_path, "modelscope", hub.url,
                                                                       repo="tiny-org/nope"))))) is False

    def refused(self, repo_id, repo_type):
        raise NetworkError("connection refused")

    monkeypatch.setattr(HubApi, "repo_exists", refused)
    assert hub_fetch._known_repo(model) is None  # unknown: the 404's own message stands

    def broken(self, repo_id, repo_type):
        raise TypeError("a bug")

    monkeypatch.setattr(HubApi, "repo_exists", broken)
    with pytest.raises(TypeError, match="a bug"):
        hub_fetch._known_repo(model)
