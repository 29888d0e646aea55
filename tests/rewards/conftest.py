"""The reward tests measure gspo's verifier against its peers, called as verl calls them: benchmarks/peers.py (test
and benchmark code, not shipped in the package), importable as `peers`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
