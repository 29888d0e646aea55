"""Packaging beyond what pyproject.toml can say: `presets/` (repository root) ships as `gspo_cli.builtin_presets`."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["gspo_cli", "gspo_cli.*"]), "gspo_cli.builtin_presets"],
    package_dir={"gspo_cli.builtin_presets": "presets"},
    package_data={"gspo_cli": ["**/*.json", "**/*.jinja"], "gspo_cli.builtin_presets": ["*.yaml"]},
)
