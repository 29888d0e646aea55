"""`gspo train` (native) refuses data prepared with other settings than the preset's."""

from __future__ import annotations

import pytest

# Out of `make test-fast`: these tests run real training, CLI subprocesses or verl's config compose (5-60 s each).
pytestmark = pytest.mark.slow


def test_train_refuses_data_prepared_with_other_settings(gspo):
    prep = gspo("prepare-data", "--preset", "tiny", "--local")
    assert prep.returncode == 0, prep.stderr
    proc = gspo("train", "--preset", "tiny", "--local", "--set", "data.arith.max_operand=5")
    assert proc.returncode == 2, proc.stderr
    assert "prepared arith does not match preset tiny" in proc.stderr and "'max_operand': 5" in proc.stderr
    assert "gspo prepare-data --preset tiny" in proc.stderr and "Traceback" not in proc.stderr
