"""Make the accuracy helpers beside these tests (mutations.py) importable by them."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
