"""Issue #39, left over: `trust_remote_code` comes only from the user's own preset or flag, "with a visible line".
`gspo eval` printed one; `gspo train` (both engines, run or `--dry-run`, text or `--json`) printed none when the
user's own preset or `--set model.trust_remote_code=true` turned it on. Now one line on stderr (config/trust.py,
printed by cli/train.py before either engine starts) and the dry-run's `--json` field `trust_remote_code`.

On e0ecdb8 the tests below fail (no line on stderr, no `trust_remote_code` field); the control fails there only
on the missing field, and the run-folder one only on the line's words (the loader noted that case already: the
test checks that train's own line and the loader's note stay one line)."""

from __future__ import annotations

import json

import pytest
import yaml

from gspo_cli.config import presets
from gspo_cli.config.schema import to_jsonable

pytestmark = pytest.mark.security

WILL_RUN = "the model folder's own Python code will run"


def _trust_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if "trust_remote_code: on" in ln]


def _own_preset(tmp_path, parent: str):
    path = tmp_path / "mine.yaml"
    path.write_text(f"extends: {parent}\nname: mine\nmodel:\n  trust_remote_code: true\n")
    return path


def test_native_dry_run_names_the_user_s_preset_line_and_set(gspo, gspo_home, tmp_path):
    """Text: the preset file and line that turned it on; --json: the `--set` that did, as a field and on stderr."""
    mine = _own_preset(tmp_path, "tiny")
    text = gspo("train", "--preset", str(mine), "--dry-run", env={"COLUMNS": "400"})
    assert text.returncode == 2 and "Traceback" not in text.stderr, text.stderr  # 2: data not prepared
    assert _trust_lines(text.stderr) == [f"trust_remote_code: on (preset mine, {mine}:4 model.trust_remote_code): "
                                         f"{WILL_RUN}"], text.stderr
    js = gspo("train", "--preset", "tiny", "--set", "model.trust_remote_code=true", "--dry-run", "--json",
              env={"COLUMNS": "400"})
    field = json.loads(js.stdout)["trust_remote_code"]
    assert field == {"on": True, "from": "--set model.trust_remote_code=true",
                     "line": f"trust_remote_code: on (--set model.trust_remote_code=true): {WILL_RUN}"}
    assert _trust_lines(js.stderr) == [field["line"]]


def test_control_off_says_nothing(gspo, gspo_home):
    """Control: off by default, no line, the field says off."""
    js = gspo("train", "--preset", "tiny", "--dry-run", "--json")
    assert json.loads(js.stdout)["trust_remote_code"] == {"on": False, "from": None, "line": None}
    assert _trust_lines(js.stderr) == []


def test_a_run_folder_s_config_with_the_user_s_set_says_it_once(gspo, gspo_home):
    """`--resume RUN --set model.trust_remote_code=true` (a run folder's config is data: only the --set turns it
    on): one line, the note of the loader and train's own are one."""
    run = gspo_home / "runs" / "shared"
    run.mkdir(parents=True)
    saved = to_jsonable(presets.load_preset("tiny"))
    saved["model"]["trust_remote_code"] = True  # dropped: a run folder never turns it on
    (run / "config.yaml").write_text(yaml.safe_dump(saved))
    (run / "job_state.json").write_text(json.dumps({"status": "failed"}))
    off = gspo("train", "--preset", str(run / "config.yaml"), "--dry-run", env={"COLUMNS": "400"})
    assert _trust_lines(off.stderr) == [], off.stderr
    on = gspo("train", "--preset", str(run / "config.yaml"), "--set", "model.trust_remote_code=true", "--dry-run",
              env={"COLUMNS": "400"})
    assert _trust_lines(on.stderr) == [f"note: trust_remote_code: on (--set model.trust_remote_code=true): "
                                       f"{WILL_RUN}"], on.stderr


@pytest.mark.slow  # verl's schema check in a subprocess (a minute on a loaded host)
def test_verl_dry_run_json_has_the_field_and_the_line(gspo, gspo_home, tmp_path):
    mine = _own_preset(tmp_path, "tiny-verl")
    js = gspo("train", "--preset", str(mine), "--dry-run", "--json", env={"COLUMNS": "400"})
    assert "Traceback" not in js.stderr, js.stderr[-2000:]
    plan = json.loads(js.stdout)
    where = f"preset mine, {mine}:4 model.trust_remote_code"
    assert plan["trust_remote_code"] == {"on": True, "from": where, "line": f"trust_remote_code: on ({where}): {WILL_RUN}"}
    assert _trust_lines(js.stderr) == [plan["trust_remote_code"]["line"]]
    assert "actor_rollout_ref.model.trust_remote_code=True" in plan["overrides"]
