"""Regenerate tests/data/xpk_1_16_tpu_shapes.json from an installed xpk 1.16.

The tests only read the JSON; run this by hand with a throwaway venv outside the repo:

    python3 -m venv /tmp/xpkvenv && /tmp/xpkvenv/bin/pip install xpk==1.16.0
    /tmp/xpkvenv/bin/python scripts/refresh_xpk_fixture.py
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

from xpk.core.system_characteristics import UserFacingNameToSystemCharacteristics

# GKE accelerator label values of the generations the catalog covers (v5e, v5p, v6e).
LABELS = ("tpu-v5-lite-podslice", "tpu-v5p-slice", "tpu-v6e-slice")
FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "data" / "xpk_1_16_tpu_shapes.json"


def main() -> int:
    xpk_version = version("xpk")
    if not xpk_version.startswith("1.16."):
        print(f"expected xpk 1.16.x (the fixture is named for it), found {xpk_version}")
        return 1
    names = {
        name: {
            "topology": sc.topology,
            "machine_type": sc.gce_machine_type,
            "gke_accelerator": sc.gke_accelerator,
            "vms_per_slice": sc.vms_per_slice,
            "chips_per_vm": sc.chips_per_vm,
            "pathways_tpu_version": sc.pathways_tpu_version,
        }
        for name, sc in sorted(UserFacingNameToSystemCharacteristics.items())
        if sc.gke_accelerator in LABELS
    }
    # One name per line: small, diff-friendly and still plain JSON.
    rows = ",\n".join(f"  {json.dumps(n)}: {json.dumps(v)}" for n, v in names.items())
    FIXTURE.write_text(f'{{\n "xpk_version": "{xpk_version}",\n "names": {{\n{rows}\n }}\n}}\n')
    print(f"wrote {len(names)} names to {FIXTURE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
