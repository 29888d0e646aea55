"""Packaging beyond what pyproject.toml can say: `presets/` (repository root) ships as `gspo_cli.builtin_presets`.

Data-only folders inside gspo_cli (no __init__.py, e.g. `accept/baselines/`) are namespace packages to Python, so
they are found with find_namespace_packages and listed as packages: setuptools installs them either way, but warns
("Package would be ignored", ~40 lines per folder) about a data folder missing from `packages`."""

from setuptools import find_namespace_packages, setup

setup(
    packages=[*find_namespace_packages(include=["gspo_cli", "gspo_cli.*"], exclude=["*.__pycache__"]),
              "gspo_cli.builtin_presets"],
    package_dir={"gspo_cli.builtin_presets": "presets"},
    package_data={"gspo_cli": ["**/*.json", "**/*.jinja"], "gspo_cli.builtin_presets": ["*.yaml"]},
)
