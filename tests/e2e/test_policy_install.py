"""The policy pack installs on its own: everything it imports from outside the repository is in
its hash-pinned ``policy/requirements.txt`` (no `-e ..`, no project install)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]

# Run the pack's modules as __main__.py imports them (without serving), then report every
# distribution whose files any loaded module came from.
PROBE = """
import json, sys
from importlib.metadata import packages_distributions
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import tpu_pathways_policies
tpu_pathways_policies.policies()
owners = packages_distributions()
top = {name.split(".")[0] for name, module in list(sys.modules.items())
       if getattr(module, "__file__", None) and "site-packages" in module.__file__}
print(json.dumps(sorted({d for name in top for d in owners.get(name, [])})))
"""


def locked_names(text: str) -> set[str]:
    return {
        canonicalize_name(m.group(1))
        for m in re.finditer(r"^([A-Za-z0-9_.-]+)==", text, re.MULTILINE)
    }


def test_every_package_the_pack_loads_is_in_its_requirements():
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(ROOT / "policy"), str(ROOT)],
        capture_output=True,
        text=True,
        cwd=ROOT / "policy",
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    loaded = {canonicalize_name(d) for d in json.loads(done.stdout)}
    required = locked_names((ROOT / "policy" / "requirements.txt").read_text())
    assert {"pulumi-policy", "pydantic", "pyyaml"} <= loaded
    # the project itself may be installed in this virtualenv; the pack does not need it
    assert loaded - required - {"tpu-pathways"} == set()


def test_the_requirements_finder_reads_pins():
    assert locked_names("pulumi==3.272.0 \\\n    --hash=sha256:ab\nPyYAML==6.0.3\n") == {
        "pulumi",
        "pyyaml",
    }
