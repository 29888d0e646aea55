"""Atomic writes: the file appears whole or not at all, with normal permissions."""

from __future__ import annotations

import os
import stat

import pytest

from gspo_cli.fsutil import atomic_dir, atomic_path, atomic_write_json, atomic_write_text


def test_atomic_write_replaces_and_leaves_no_temp(tmp_path):
    dest = tmp_path / "sub" / "f.txt"
    atomic_write_text(dest, "one")
    atomic_write_text(dest, "two")
    assert dest.read_text() == "two"
    assert [p.name for p in dest.parent.iterdir()] == ["f.txt"]


def test_failure_keeps_the_old_file(tmp_path):
    tmp_path = tmp_path / "w"
    dest = tmp_path / "f.json"
    atomic_write_json(dest, {"a": 1})
    with pytest.raises(RuntimeError), atomic_path(dest) as tmp:
        tmp.write_text("half")
        raise RuntimeError("crash mid-write")
    assert dest.read_text().strip().startswith("{") and '"a": 1' in dest.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]


def test_files_follow_the_umask_not_0600(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "m.json", "{}")
        with atomic_dir(tmp_path / "d") as d:
            (d / "x").write_text("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "m.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "d").stat().st_mode) == 0o755


def test_atomic_dir_replaces_whole_folder(tmp_path):
    tmp_path = tmp_path / "w"
    dest = tmp_path / "ckpt"
    with atomic_dir(dest) as d:
        (d / "a").write_text("1")
    with pytest.raises(ValueError), atomic_dir(dest) as d:
        (d / "b").write_text("2")
        raise ValueError
    assert sorted(p.name for p in dest.iterdir()) == ["a"]
    with atomic_dir(dest) as d:
        (d / "c").write_text("3")
    assert sorted(p.name for p in dest.iterdir()) == ["c"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]
