"""Private runtime dirs: a folder another local user made first (uid `nobody`) is refused, never written through.

We run as root, so "another user" is simulated by chown-ing the planted folder to nobody (uid 65534).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from gspo_cli import layout
from gspo_cli.errors import ConfigError
from gspo_cli.jobs import auth, local_head
from gspo_cli.private import ensure_private_dir

pytestmark = pytest.mark.security
NOBODY = 65534


@pytest.fixture
def planted(tmp_path):
    """A short folder under /tmp as another user would plant it: owned by nobody, mode 0777, with a
    `ray_current_cluster` symlink pointing at a root-owned file."""
    victim = tmp_path / "root-owned-target"
    victim.write_text("original\n")
    d = Path(tempfile.mkdtemp(prefix="gspo-sec-"))
    (d / "ray_current_cluster").symlink_to(victim)
    os.lchown(d / "ray_current_cluster", NOBODY, NOBODY)
    os.chmod(d, 0o777)
    os.chown(d, NOBODY, NOBODY)
    yield d, victim
    shutil.rmtree(d, ignore_errors=True)


def test_cluster_up_refuses_a_temp_dir_planted_by_another_user(planted, gspo_at, gspo_home):
    d, victim = planted
    proc = gspo_at("cluster", "up", "--preset", "tiny", "--temp-dir", str(d), "--wait", "0", "--num-cpus", "1")
    assert proc.returncode == 2, proc.stderr
    assert f"gspo's Ray temp dir {d} belongs to nobody (uid {NOBODY})" in proc.stderr, proc.stderr
    assert "refuses to use it" in proc.stderr and "Traceback" not in proc.stderr
    assert victim.read_text() == "original\n" and os.stat(d).st_uid == NOBODY
    assert not list((gspo_home / "ray" / "nodes").glob("*.json")) if (gspo_home / "ray" / "nodes").exists() else True


def test_an_open_folder_of_our_own_is_refused_with_the_chmod_fix(tmp_path):
    d = tmp_path / "open"
    d.mkdir()
    os.chmod(d, 0o755)
    with pytest.raises(ConfigError) as err:
        ensure_private_dir(d, "Ray temp dir")
    assert "has mode 0755: other users may enter it" in err.value.message and f"chmod 700 {d}" in err.value.hint
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    with pytest.raises(ConfigError, match="is a symlink"):
        ensure_private_dir(link)


def test_gspo_home_ray_owned_by_another_user_is_refused(gspo_home):
    ray = gspo_home / "ray"
    ray.mkdir(mode=0o700)
    os.chown(ray, NOBODY, NOBODY)
    for act in (local_head.start, auth.ensure_cluster_token):
        with pytest.raises(ConfigError, match=f"Ray folder {ray} belongs to nobody"):
            act()
    assert not any(ray.iterdir())


def test_embedded_head_never_uses_the_old_predictable_tmp_path(gspo_home, monkeypatch, tmp_path):
    deep = tmp_path / ("x" * 40) / "home"  # too long for Ray's socket paths under $GSPO_HOME
    deep.mkdir(parents=True)
    monkeypatch.setenv("GSPO_HOME", str(deep))
    old = Path("/tmp") / f"gspo-ray-{hashlib.sha1(str(deep).encode()).hexdigest()[:8]}"
    old.mkdir(exist_ok=True)
    os.chown(old, NOBODY, NOBODY)
    try:
        chosen = local_head._temp_dir()  # Ray's dir, inside a private folder of ours
        outer = chosen.parent
        assert old not in (chosen, outer) and outer.name.startswith("gspo-ray-") and chosen.name == "ray"
        st = outer.stat()
        assert st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o700
        # a previous head's folder is reused only while it is still ours and private
        assert local_head._temp_dir(str(chosen)) == chosen
        os.chown(outer, NOBODY, NOBODY)
        assert local_head._temp_dir(str(chosen)).parent not in (outer, old)
    finally:
        shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(outer, ignore_errors=True)


def test_short_home_temp_dir_is_under_gspo_home_and_private(gspo_home, monkeypatch, tmp_path):
    short = Path(tempfile.mkdtemp(prefix="gh-"))
    monkeypatch.setenv("GSPO_HOME", str(short))
    try:
        chosen = local_head._temp_dir()
        assert chosen == layout.ray_dir() / "tmp" / "ray"
        assert stat.S_IMODE(chosen.parent.stat().st_mode) == 0o700 and stat.S_IMODE(layout.ray_dir().stat().st_mode) == 0o700
    finally:
        shutil.rmtree(short, ignore_errors=True)


def test_token_write_never_follows_a_symlink_or_keeps_an_old_mode(gspo_home, tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("untouched\n")
    ray = ensure_private_dir(layout.ray_dir())
    (ray / "auth_token").symlink_to(target)
    path = auth.write_new_token(auth.cluster_token_file())
    st = os.lstat(path)
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600 and target.read_text() == "untouched\n"
    embedded = auth.embedded_token_file()
    embedded.write_text("old")
    os.chmod(embedded, 0o644)
    auth.write_new_token(embedded)
    assert stat.S_IMODE(os.stat(embedded).st_mode) == 0o600 and auth.read_token(embedded) != "old"
    assert not [p for p in ray.iterdir() if p.name.endswith(".tmp")]


def test_job_request_folder_is_private(gspo_home):
    from gspo_cli.jobs import request

    path = request.write("prepare-data", {"x": 1})
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_the_session_heads_temp_dir_is_private(ray_head):
    """Ray makes its own temp dir 0777; the folder gspo put it in keeps every other user out."""
    st = os.stat(Path(ray_head.temp_dir).parent)
    assert st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o700
