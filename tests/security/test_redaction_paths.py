"""Issue #39, finding 5: a secret is redacted by the key path it resolves to, whatever the `--set` form.

On 85f9e67 (main): `gspo train --preset tiny-verl --dry-run --set 'env={vars: {HF_TOKEN: ...}}'` printed the
value in "--set changes:" (text) and in `sets` (`--json`); `gspo presets show tiny-verl --resolved --set
env.vars.HF_TOKEN=...` printed it in the resolved YAML. Now every output shows `<redacted>` (private.redact_set,
jobs/secret_env.redact_preset: the one secret rule, private.is_secret_name).
"""

from __future__ import annotations

import pytest

from gspo_cli.private import REDACTED, redact_set

pytestmark = pytest.mark.security

SECRET = "hf_live_9c4e1b7a2d"
FORMS = [
    f"env.vars.HF_TOKEN={SECRET}",
    f"env.vars={{HF_TOKEN: {SECRET}}}",
    f"env={{vars: {{HF_TOKEN: {SECRET}}}}}",
    f"env={{vars: {{MY_PASSPHRASE: {SECRET}}}, secrets: [MY_PASSPHRASE]}}",  # marked by the set itself
]
COMMANDS = [
    ("train", "--preset", "tiny-verl", "--dry-run", "--verbose"),
    ("train", "--preset", "tiny-verl", "--dry-run", "--json"),
    ("presets", "show", "tiny-verl", "--resolved"),
    ("presets", "show", "tiny-verl", "--resolved", "--json"),
]


@pytest.fixture(scope="module")
def shared_home(tmp_path_factory):
    """One $GSPO_HOME for the module: verl's schema verdict (independent of env.vars) is computed once, not per
    dry-run (each cold check imports verl and torch)."""
    return tmp_path_factory.mktemp("home")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:1] + c[3:]))
def test_no_set_form_prints_a_secret(gspo_at, shared_home, command, form):
    proc = gspo_at(*command, "--set", form, env={"COLUMNS": "200", "GSPO_HOME": str(shared_home)}, timeout=600)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert SECRET not in proc.stdout + proc.stderr
    assert REDACTED in proc.stdout  # control: the secret was there to hide, and the output shows where


@pytest.mark.parametrize("form", FORMS)
def test_redact_set_keeps_the_public_part(form):
    shown = redact_set(form)
    assert SECRET not in shown and REDACTED in shown
    assert redact_set(f"env={{vars: {{OMP_NUM_THREADS: 4, HF_TOKEN: {SECRET}}}}}").startswith(
        "env={vars: {HF_TOKEN: <redacted>, OMP_NUM_THREADS: 4}")
    assert redact_set("env=[unparseable") == f"env={REDACTED}"  # cannot be read: hidden whole
    assert redact_set("actor.lr=2e-6") == "actor.lr=2e-6" and redact_set("env.nofile=65536") == "env.nofile=65536"
