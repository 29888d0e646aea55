"""The docs stay true: the presets reference lists every schema key, and the README's commands exist."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_presets_reference_matches_the_schema():
    spec = importlib.util.spec_from_file_location("gen", REPO / "docs" / "gen_presets_reference.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    from gspo_cli.config.schema import Preset

    text = (REPO / "docs" / "presets.md").read_text()
    table = text.split("<!-- keys:begin -->")[1].split("<!-- keys:end -->")[0]
    assert [ln for ln in table.strip().splitlines()[2:]] == gen.rows(Preset), (
        "docs/presets.md is out of date: run .venv/bin/python docs/gen_presets_reference.py and paste the table"
    )


def test_readme_names_the_two_commands_and_makefile_has_them():
    readme = (REPO / "README.md").read_text()
    makefile = (REPO / "Makefile").read_text()
    for target in ("demo", "test"):
        assert f"make {target}" in readme
        assert re.search(rf"^{target}:", makefile, re.M), target
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_builtin_presets_table_lists_every_builtin():
    from gspo_cli.config import presets

    text = (REPO / "docs" / "presets.md").read_text()
    for source in presets.builtin_sources():
        assert f"`{source.name}`" in text, source.name
