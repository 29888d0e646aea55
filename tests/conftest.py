"""Shared fixtures: every test gets its own $GSPO_HOME; Ray tests share one real embedded head per session; the
xdist groups and run order of `make test` (-n N --dist loadgroup)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def pytest_addoption(parser):
    parser.addoption("--shuffle-seed", type=int, default=None,
                     help="run the tests in a random order drawn from this seed (proves no test relies on another's "
                          "order or leftovers); the same seed gives every xdist worker the same order")


# Run order, heaviest module first: under pytest-xdist (`make test`: -n N --dist loadgroup) a long test handed out
# last would leave the other workers idle at the end. A module keeps its tests together and in their order (its
# module-scoped fixtures are built once); without xdist the order changes nothing but the sequence.
_RANK = ("multinode", "ray", "slow")


def _rank(item) -> int:
    return next((i for i, mark in enumerate(_RANK) if item.get_closest_marker(mark)), len(_RANK))


def _shared_scope(item) -> str | None:
    """The module (or class) whose fixture this test shares with its neighbours: a module- or class-scoped fixture
    is built once per worker that runs one of its tests, so such tests go to one worker together."""
    scopes = {d[-1].scope for d in item._fixtureinfo.name2fixturedefs.values() if d}
    if "package" in scopes:
        return str(Path(item.path).parent.relative_to(REPO))
    if "module" in scopes:
        return str(Path(item.path).relative_to(REPO))
    if "class" in scopes and item.cls is not None:
        return f"{Path(item.path).relative_to(REPO)}::{item.cls.__name__}"
    return None


# Under xdist the Ray tests keep to two workers, one test at a time each, as in a serial run: every test using the
# session's `ray_head` runs on one worker (one head for the whole run, not one per worker), and every other test that
# starts Ray itself (marked `ray` or `multinode`: `gspo cluster up`, the embedded head, ray.init) on another. Ray's
# start-up has fixed deadlines (a raylet must register within 30 s) that several heads starting at once on a busy
# 2-core machine miss; the other workers run the unit and `slow` tests beside them.
RAY_HEAD_GROUP, RAY_CLUSTER_GROUP = "ray_head", "ray_cluster"


def _group(item) -> str | None:
    if "session_ray_head" in item.fixturenames:  # (tests/env/test_cluster_ray.py has a ray_head of its own)
        return RAY_HEAD_GROUP
    if item.get_closest_marker("ray") or item.get_closest_marker("multinode"):
        return RAY_CLUSTER_GROUP
    return _shared_scope(item)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("xdist_group") is None and (group := _group(item)):
            item.add_marker(pytest.mark.xdist_group(group))


# after xdist's hook and pytest's own fixture-scope reordering
@pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")
def pytest_collection_modifyitems_last(config, items):
    _xdist_group_ids(items)
    _order(config, items)


def _xdist_group_ids(items) -> None:
    """pytest-xdist 3.8 puts a test in its xdist_group by appending "@<group>" to `item._nodeid`, which pytest 9.2
    no longer reads (the id is `item._id`): without this, --dist loadgroup silently ignores every group."""
    for item in items:
        tagged = item.__dict__.get("_nodeid")
        if tagged and tagged != item.nodeid and hasattr(item, "_id"):
            item._id = type(item._id).parse(tagged)


def _order(config, items) -> None:
    seed = config.getoption("--shuffle-seed")
    if seed is not None:
        import random

        random.Random(seed).shuffle(items)
        return
    first: dict[Path, int] = {}
    rank: dict[Path, int] = {}
    for i, item in enumerate(items):
        first.setdefault(item.path, i)
        rank[item.path] = min(rank.get(item.path, len(_RANK)), _rank(item))
    items.sort(key=lambda item: (rank[item.path], first[item.path]))  # stable: a module's own order kept


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
def session_ray_head(tmp_path_factory):
    """A real local Ray head on 127.0.0.1, started through gspo's own embedded-head code once per session (per xdist
    worker: under `make test` one worker runs every test asking for it) and torn down after. Tests ask for
    `ray_head`, which also names its token to them."""
    from gspo_cli.jobs import local_head

    home = tmp_path_factory.mktemp("ray-home")
    old = os.environ.get("GSPO_HOME")
    os.environ["GSPO_HOME"] = str(home)
    try:
        record = local_head.start(num_cpus=2)
    finally:
        _restore_env("GSPO_HOME", old)
    yield record
    os.environ["GSPO_HOME"] = str(home)
    try:
        local_head.stop()
        # gspo never deletes a user's Ray temp dir; this one belongs to the test session.
        temp = Path(record.temp_dir)  # Ray's dir inside gspo's private folder (jobs/local_head.py)
        shutil.rmtree(temp.parent if temp.parent.name.startswith("gspo-ray-") else temp, ignore_errors=True)
    finally:
        _restore_env("GSPO_HOME", old)


@pytest.fixture
def ray_head(session_ray_head):
    """The session's Ray head (its HeadRecord). Tests talk to it with `--address <dashboard_url>` (or RAY_ADDRESS),
    so their per-test $GSPO_HOME stays empty. The head wants its token (gspo_cli/jobs/auth.py): for this test only,
    RAY_AUTH_MODE=token + RAY_AUTH_TOKEN_PATH name it the way a user of someone else's cluster would, for this
    process and the test's `gspo` subprocesses; afterwards they are as before, so a test that does not ask for the
    head never sees its token (it did while the session set them: a test's outcome then depended on the order).
    The head serves on 127.0.0.1 only, in Ray's local-only mode (gspo_cli/jobs/loopback.py); a driver that joins it
    (ray.init here or in a subprocess) must run in that mode too: set the same way, for this test only."""
    from gspo_cli.jobs import auth, loopback

    saved = {k: os.environ.get(k) for k in (*auth.AUTH_VARS, loopback.SWITCH)}
    # Also refreshes Ray's cached auth config when Ray is already imported (verl imports it at collection).
    auth.use_in_process(auth.TOKEN, session_ray_head.token_file)
    os.environ[loopback.SWITCH] = loopback.LOCAL_ONLY
    _ray_cluster_switch()
    yield session_ray_head
    for key, value in saved.items():
        _restore_env(key, value)
    _ray_cluster_switch()
    if "ray._raylet" in sys.modules:
        from ray._raylet import AuthenticationTokenLoader, Config

        Config.initialize("")
        AuthenticationTokenLoader.instance().reset_cache()


def _ray_cluster_switch() -> None:
    """Ray reads its local-only switch once, at import: tell an imported Ray the environment's value again."""
    if "ray._private.ray_constants" in sys.modules:
        from ray._private import ray_constants

        ray_constants.ENABLE_RAY_CLUSTER = ray_constants.env_bool(ray_constants.ENABLE_RAY_CLUSTERS_ENV_VAR,
                                                                  not ray_constants.IS_WINDOWS_OR_OSX)


def _restore_env(key: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(key, None)
    else:
        os.environ[key] = value


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
