"""The job-wrapper tests import the labelled verl stand-in (standin_verl.py) from this folder."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
