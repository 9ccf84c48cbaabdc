"""Regenerate tests/data/xpk_1_16_tpu_shapes.json from xpk 1.16: every TPU name it accepts.

The tests only read the JSON; run this by hand outside the repo's venv, with xpk importable.
Either install it in a throwaway venv:

    python3 -m venv /tmp/xpkvenv && /tmp/xpkvenv/bin/pip install xpk==1.16.0
    /tmp/xpkvenv/bin/python scripts/refresh_xpk_fixture.py

or unpack the wheel (the TPU table needs only the standard library and PyYAML):

    pip download xpk==1.16.0 --no-deps -d /tmp/xpk && cd /tmp/xpk && unzip -q xpk-*.whl
    PYTHONPATH=/tmp/xpk python3 scripts/refresh_xpk_fixture.py --version 1.16.0
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from xpk.core.system_characteristics import AcceleratorType, UserFacingNameToSystemCharacteristics

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "data" / "xpk_1_16_tpu_shapes.json"


def _installed_version(given: str | None) -> str:
    if given:
        return given
    try:
        return version("xpk")
    except PackageNotFoundError:
        sys.exit("xpk is importable but not installed; say which it is with --version 1.16.0")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", help="the xpk version on PYTHONPATH (an unpacked wheel)")
    xpk_version = _installed_version(parser.parse_args().version)
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
            "device_type": sc.device_type,  # '<prefix>-<tensorcores>'
            "pathways_tpu_version": sc.pathways_tpu_version,
            "requires_workload_policy": sc.requires_workload_policy,
        }
        for name, sc in sorted(UserFacingNameToSystemCharacteristics.items())
        if sc.accelerator_type == AcceleratorType.TPU
    }
    # One name per line: small, diff-friendly and still plain JSON.
    rows = ",\n".join(f"  {json.dumps(n)}: {json.dumps(v)}" for n, v in names.items())
    FIXTURE.write_text(f'{{\n "xpk_version": "{xpk_version}",\n "names": {{\n{rows}\n }}\n}}\n')
    counts = Counter(v["gke_accelerator"] for v in names.values())
    print(f"wrote {len(names)} names to {FIXTURE}: {dict(counts.most_common())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
