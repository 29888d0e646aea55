"""Hubs users can reach (issue 44): ModelScope or a mirror, chosen in the preset (`hub:`) or by the environment,
with pinned revisions and one-line errors. The downloads run the real modelscope client against a loopback server
that speaks the part of ModelScope's API it asks (as test_cli.py's fake_hub does for huggingface_hub)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hub_servers import LoopbackHub, Repo, serve
from raw_factories import write_aime_h4

from gspo_cli.config import env_rule
from gspo_cli.config import hub as hubs
from gspo_cli.config.presets import load_preset
from gspo_cli.errors import ConfigError, DataError, GspoError

REPO, FILE, REV = "BytedTsinghua-SIA/AIME-2024", "data/aime-2024.parquet", "v1.0"


def _preset_file(tmp_path: Path, hub: str, revision: str | None = REV, extends: str = "qwen3-8b-1x16") -> Path:
    rev = f"\n    revision: {revision}" if revision else ""
    path = tmp_path / "ms.yaml"
    path.write_text(f"name: ms-test\nextends: {extends}\n{hub}\ndata:\n  train:\n    hub_repo: "
                    f"BytedTsinghua-SIA/DAPO-Math-17k{rev}\n  val:\n    hub_repo: {REPO}{rev}\n")
    return path


# ------------------------------------------------------------------ the hub setting is data: checked


@pytest.mark.parametrize("bad, said", [
    ("https://user:secret@mirror.example.cn", "carries credentials"),
    ("http://mirror.example.cn", "is not https"),
    ("ftp://mirror.example.cn", "is not an https:// URL"),
    ("https://mirror.example.cn/api?token=x", "has a path, query or fragment"),
    ("https://$(touch /tmp/x)", "holds spaces"),
    ("https://a_b!.cn", "does not name a host"),
    ("https://", "does not name a host"),
    ("mirror.example.cn", "is not an https:// URL"),
])
def test_bad_endpoint_is_one_line_and_never_echoes_secrets(tmp_path, bad, said):
    path = tmp_path / "bad.yaml"  # a preset file (a --set is echoed as the user typed it)
    path.write_text(f"name: bad\nextends: qwen3-8b-1x16\nhub:\n  name: modelscope\n  endpoint: '{bad}'\n")
    with pytest.raises(GspoError) as err:
        load_preset(str(path))
    assert said in err.value.message and "\n" not in err.value.message
    assert "secret" not in err.value.message and "token=x" not in err.value.message


@pytest.mark.parametrize("good, normal", [
    ("https://hf-mirror.com/", "https://hf-mirror.com"),
    ("https://Mirror.Example.cn:8443", "https://mirror.example.cn:8443"),
    ("http://127.0.0.1:9000", "http://127.0.0.1:9000"),  # a loopback mirror may be plain http
])
def test_good_endpoint_is_kept_normalised(good, normal):  # the control of the refusals above
    preset = load_preset("qwen3-8b-1x16", ["hub.name=huggingface", f"hub.endpoint={good}"])
    assert preset.hub.endpoint == normal and hubs.of(preset).url == normal


def test_unknown_hub_and_an_endpoint_without_a_hub():
    with pytest.raises(GspoError, match=r"unknown hub 'hugginface' \(known: huggingface, modelscope\)"):
        load_preset("qwen3-8b-1x16", ["hub.name=hugginface"])
    with pytest.raises(GspoError, match="hub.endpoint needs hub.name"):
        load_preset("qwen3-8b-1x16", ["hub.endpoint=https://hf-mirror.com"])


def test_environment_chooses_when_the_preset_does_not():
    assert hubs.resolve(None, {}).name == hubs.HUGGINGFACE
    ms = hubs.resolve(None, {"VERL_USE_MODELSCOPE": "True", "MODELSCOPE_ENDPOINT": "https://ms.example.cn/"})
    assert (ms.name, ms.url, ms.chosen_by) == ("modelscope", "https://ms.example.cn", "VERL_USE_MODELSCOPE=true")
    mirror = hubs.resolve(None, {"HF_ENDPOINT": "https://hf-mirror.com"})
    assert (mirror.name, mirror.url, mirror.endpoint_from) == ("huggingface", "https://hf-mirror.com", "HF_ENDPOINT")
    with pytest.raises(ConfigError, match="HF_ENDPOINT: .*carries credentials"):
        hubs.resolve(None, {"HF_ENDPOINT": "https://u:p@hf-mirror.com"})
    preset = hubs.HubSection(name="huggingface")  # the preset wins over the environment
    assert hubs.resolve(preset, {"VERL_USE_MODELSCOPE": "true"}).name == hubs.HUGGINGFACE


def test_a_modelscope_download_needs_a_pinned_revision():
    ms = hubs.resolve(hubs.HubSection(name="modelscope"), {})
    for revision, said in ((None, "none is set"), ("master", "'master' is a branch that moves")):
        with pytest.raises(ConfigError, match=f"needs a pinned revision \\(data.val.revision: {said}\\)"):
            ms.require_pinned(revision, "data.val.revision", "aime-2024")
    ms.require_pinned("v1.0", "data.val.revision", "aime-2024")  # a tag: pinned
    hubs.resolve(None, {}).require_pinned(None, "data.val.revision", "aime-2024")  # HF: optional, as before


def test_the_job_environment_passes_the_env_rule(tmp_path):
    from gspo_cli.env.exports import job_vars

    preset = load_preset(str(_preset_file(tmp_path, "hub:\n  name: modelscope\n  endpoint: https://ms.example.cn")))
    env = job_vars(preset)
    assert env["VERL_USE_MODELSCOPE"] == "true" and env["MODELSCOPE_ENDPOINT"] == "https://ms.example.cn"
    assert all(env_rule.judge(name).kind != env_rule.REFUSED for name in env)
    hf = load_preset("qwen3-8b-1x16", ["hub.name=huggingface", "hub.endpoint=https://hf-mirror.com"])
    assert job_vars(hf)["HF_ENDPOINT"] == "https://hf-mirror.com" and job_vars(hf)["VERL_USE_MODELSCOPE"] == "false"
    assert "VERL_USE_MODELSCOPE" not in job_vars(load_preset("qwen3-8b-1x16"))  # no hub: the job env as before
    clash = load_preset("qwen3-8b-1x16", ["hub.name=modelscope", "env.vars.VERL_USE_MODELSCOPE='false'"])
    with pytest.raises(ConfigError, match="env.vars.VERL_USE_MODELSCOPE contradicts the hub"):
        job_vars(clash)
    # the rule itself: VERL_USE_MODELSCOPE is reviewed, the endpoint is shown like HF_ENDPOINT
    assert env_rule.judge("VERL_USE_MODELSCOPE").kind == env_rule.ALLOWED
    assert env_rule.judge("MODELSCOPE_ENDPOINT").kind == env_rule.UNREVIEWED
    assert env_rule.judge("VERL_USE_EXTERNAL_MODULES").kind == env_rule.REFUSED  # the VERL_ family stays closed


# ------------------------------------------------------------------ real modelscope client, loopback ModelScope


@pytest.fixture
def modelscope_hub(tmp_path):
    """Loopback ModelScope (hub_servers.py): `GET /api/v1/datasets/{repo}/repo?Revision=R&FilePath=F` serves the AIME
    file at revision v1.0 only; anything else answers ModelScope's 404 JSON."""
    data = write_aime_h4(tmp_path / "served.parquet").read_bytes()
    hub = LoopbackHub({REPO: Repo({FILE: data}, {REV: "c" * 40}, kind="dataset")})
    server = serve(hub)
    yield hub.url, hub.seen, data
    server.shutdown()
    server.server_close()


def _prepare(gspo, tmp_path, endpoint, revision=REV, extra_env=None):
    preset = _preset_file(tmp_path, f"hub:\n  name: modelscope\n  endpoint: {endpoint}", revision)
    env = {"MODELSCOPE_CACHE": str(tmp_path / "ms-cache"), "HF_HUB_OFFLINE": "1", **(extra_env or {})}
    return gspo("prepare-data", "--preset", str(preset), "--local", "--dataset", "aime-2024", "--json", env=env)


@pytest.mark.slow
def test_prepare_data_from_modelscope_with_a_pinned_revision(gspo, gspo_home, tmp_path, modelscope_hub):
    endpoint, seen, data = modelscope_hub
    proc = _prepare(gspo, tmp_path, endpoint)
    assert proc.returncode == 0, proc.stderr
    (report,) = json.loads(proc.stdout)["datasets"]
    inp = report["input"]
    assert report["rows_out"] == 30 and inp["origin"] == "hub" and inp["hub"] == "modelscope"
    assert (inp["revision"], inp["endpoint"], inp["hub_repo"]) == (REV, endpoint, REPO)
    assert any(f"Revision={REV}&FilePath=data%2Faime-2024.parquet" in s for s in seen), seen
    raw = gspo_home / "data" / "aime-2024" / "raw" / "modelscope" / REV / FILE
    assert raw.read_bytes() == data and sorted(p.name for p in raw.parent.iterdir()) == ["aime-2024.parquet"]
    again = _prepare(gspo, tmp_path, endpoint)  # the raw cache: no second request
    assert again.returncode == 0 and json.loads(again.stdout)["datasets"][0]["status"] == "unchanged"


@pytest.mark.slow
@pytest.mark.parametrize("revision, said", [
    ("v2.0", f"aime-2024: {REPO}/{FILE} at revision v2.0 is not on ModelScope http://127.0.0.1:"),
    (None, "a download from ModelScope needs a pinned revision (data.val.revision: none is set)"),
    ("master", "(data.val.revision: 'master' is a branch that moves)"),
])
def test_prepare_data_errors_are_one_line(gspo, gspo_home, tmp_path, modelscope_hub, revision, said):
    endpoint, seen, _ = modelscope_hub
    proc = _prepare(gspo, tmp_path, endpoint, revision)
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    assert proc.stderr.startswith("Error:") and "Traceback" not in proc.stderr
    assert not (gspo_home / "data" / "aime-2024" / "raw").exists()  # nothing half-written
    assert bool(seen) == (revision == "v2.0")  # an unpinned revision is refused before any request


def test_modelscope_not_installed_is_one_line(tmp_path, monkeypatch):
    from gspo_cli.data.modelscope import fetch_dataset_file

    # as on a host without the package: import fails, also for submodules an earlier test in this process imported
    for name in [m for m in sys.modules if m == "modelscope" or m.startswith("modelscope.")] + ["modelscope"]:
        monkeypatch.setitem(sys.modules, name, None)
    hub = hubs.resolve(hubs.HubSection(name="modelscope"), {})
    with pytest.raises(DataError, match="the hub is ModelScope and the modelscope package is not installed") as err:
        fetch_dataset_file("aime-2024", hub, REPO, FILE, REV, tmp_path / "x.parquet", "or download it")
    assert "pip install 'gspo[modelscope]'" in (err.value.hint or "")


def test_the_oracle_agrees_the_server_speaks_modelscope(tmp_path, modelscope_hub, monkeypatch):
    """The loopback server is right about ModelScope's request: the real client, called directly, gets the file."""
    from modelscope.hub.file_download import dataset_file_download

    endpoint, _, data = modelscope_hub
    monkeypatch.setenv("MODELSCOPE_CACHE", str(tmp_path / "cache"))
    got = dataset_file_download(REPO, FILE, revision=REV, local_dir=str(tmp_path / "d"), endpoint=endpoint)
    assert Path(got).read_bytes() == data


# ------------------------------------------------------------------ the dry-run says where things come from


@pytest.mark.slow
def test_dry_run_of_a_modelscope_preset(gspo, tmp_path):
    preset = _preset_file(tmp_path, "hub:\n  name: modelscope")
    proc = gspo("train", "--preset", str(preset), "--dry-run", "--json")
    payload = json.loads(proc.stdout)
    checks = {c["name"]: c for c in payload["preflight"]["checks"]}
    assert checks["hub"]["message"] == "modelscope https://www.modelscope.cn (chosen by preset hub.name)"
    assert checks["hub data.val"]["status"] == "ok" and f"{REPO}@{REV}" in checks["hub data.val"]["message"]
    assert payload["runtime_env"]["env_vars"]["VERL_USE_MODELSCOPE"] == "true"
    unpinned = gspo("train", "--preset", str(_preset_file(tmp_path, "hub:\n  name: modelscope", None)),
                    "--dry-run", "--json")
    checks = {c["name"]: c for c in json.loads(unpinned.stdout)["preflight"]["checks"]}
    assert checks["hub data.train"]["status"] == "error" and "needs a pinned revision" in checks["hub data.train"][
        "message"]
