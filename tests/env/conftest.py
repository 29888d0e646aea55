"""Fixtures of the env tests; the host builder lives in env_hosts.py."""

from __future__ import annotations

import pytest
from env_hosts import make_host


@pytest.fixture
def host_factory(tmp_path):
    def factory(**kw):
        sub = tmp_path / f"h{len(list(tmp_path.iterdir()))}"
        return make_host(sub, **kw)

    return factory


@pytest.fixture
def preset():
    from gspo_cli.config.presets import load_preset

    return load_preset("qwen3-32b")
