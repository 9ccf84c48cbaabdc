"""The component package (``provider/``) is imported as the plugin's own process imports it:
from its directory, which Pulumi runs as ``python provider/``."""

import sys
from pathlib import Path

PROVIDER_DIR = Path(__file__).resolve().parents[2] / "provider"
if str(PROVIDER_DIR) not in sys.path:
    sys.path.insert(0, str(PROVIDER_DIR))
