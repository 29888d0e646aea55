"""`gspo train` (native) refuses data prepared with other settings than the preset's, says which settings differ,
and its fix prepares the data the run needs (the `data.*` overrides carried)."""

from __future__ import annotations

import pytest

# Out of `make test-fast`: these tests run real training, CLI subprocesses or verl's config compose (5-60 s each).
pytestmark = pytest.mark.slow


def test_train_refuses_data_prepared_with_other_settings(gspo):
    prep = gspo("prepare-data", "--preset", "tiny", "--local")
    assert prep.returncode == 0, prep.stderr
    proc = gspo("train", "--preset", "tiny", "--local", "--set", "data.arith.max_operand=5")
    assert proc.returncode == 2, proc.stderr
    assert "dataset arith is not prepared for preset tiny" in proc.stderr, proc.stderr
    assert "max_operand 9 there, 5 here" in proc.stderr, proc.stderr
    assert "gspo prepare-data --preset tiny --set data.arith.max_operand=5" in proc.stderr
    assert "Traceback" not in proc.stderr
    fixed = gspo("prepare-data", "--preset", "tiny", "--local", "--set", "data.arith.max_operand=5")
    assert fixed.returncode == 0, fixed.stderr  # the fix as printed makes the data the run needs
    dry = gspo("train", "--preset", "tiny", "--local", "--dry-run", "--set", "data.arith.max_operand=5")
    assert "not prepared" not in dry.stdout + dry.stderr, dry.stdout + dry.stderr
