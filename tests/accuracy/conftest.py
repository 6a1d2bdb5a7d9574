"""Make the accuracy helpers (cases.py) importable by the tests beside them."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
