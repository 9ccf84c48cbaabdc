"""Policy pack entry point: `pulumi preview --policy-pack policy` runs this file.

The pack's virtualenv (``policy/.venv``) holds only third-party packages, hash-pinned in
``requirements.txt``. The rules are the project's own (``components.policy.rules`` and the pure
modules it reads), imported from the repository checkout this pack sits in (``policy/..``):
the pack checks stacks with the rules of the same commit as the program.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# The checkout first: a project installed in the pack's virtualenv must not shadow its rules.
# Pulumi runs the pack directory with runpy, which puts it on sys.path; keep that explicit.
for path in (HERE, HERE.parent):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402
from tpu_pathways_policies import PACK_NAME, policies  # noqa: E402

PolicyPack(
    name=PACK_NAME,
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=policies(),
)
