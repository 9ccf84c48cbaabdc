"""A small cluster owner stack ("lab") that tests write as a stack file, and the writer of
unprefixed stack values (``write_stacks``): the team-stack tests (tests/components/
test_shared_cluster.py) and the reads of an owner from its file (tests/unit/resolve/
test_reference_fidelity.py) share them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

OWNER: dict[str, Any] = {
    "gcp": {"project": "tpu-pathways-lab", "region": "us-east5", "zone": "us-east5-a"},
    "cluster": {"name": "lab", "deletionProtection": False},
    "cpuPool": {"maxNodes": 4},
    "tpuPools": [{"name": "v5p", "accelerator": "v5p-16", "slices": 2}],
    "addons": {"kueue": {"enabled": True}},
    # The owner's team and the team stack's share the owner's pools, and say so.
    "teams": [{"name": "platform", "isolation": "shared"}],
}


def write_stacks(directory: Path, stacks: dict[str, dict[str, Any]]) -> Path:
    """``directory/Pulumi.<name>.yaml`` for each name, its values under ``tpu-pathways:``."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, values in stacks.items():
        config = {f"tpu-pathways:{k}": v for k, v in values.items()}
        (directory / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": config}))
    return directory
