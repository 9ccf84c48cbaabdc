"""Policy pack entry point: `pulumi preview --policy-pack policy` runs this file.

The rules come from the project (``components.policy.rules``), which requirements.txt installs into
the pack's virtualenv (``-e ..``).
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

try:
    import components.policy.rules  # noqa: F401  (the project, installed by requirements.txt)
except ImportError:
    # Fallback for a virtualenv without the project (e.g. only pulumi-policy installed): import
    # it from the repository this pack lives in, policy/.. .
    sys.path.insert(0, str(HERE.parent))

# Pulumi runs the pack directory with runpy, which puts it on sys.path; keep that explicit.
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402
from tpu_pathways_policies import PACK_NAME, policies  # noqa: E402

PolicyPack(
    name=PACK_NAME,
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=policies(),
)
