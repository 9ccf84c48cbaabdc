"""The TPU generations as data: per generation, its names, labels and the topologies each machine
type offers, and the PathwaysJob controller's and pathwaysutils' accepted topologies and instance
types. ``components.tpu.catalog`` generates every shape from these tables (sources: see there)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class TpuGeneration(StrEnum):
    V4 = "v4"
    V5E = "v5e"
    V5P = "v5p"
    V6E = "v6e"
    TPU7X = "tpu7x"  # Ironwood
    TPU7 = "tpu7"


@dataclass(frozen=True)
class Offer:
    """Topologies one machine type provides; ``default`` = chosen when no machine type is given."""

    machine_type: str
    topologies: tuple[str, ...]  # in XPK's generation order (it decides shared v5p names)
    default: bool = True


@dataclass(frozen=True)
class Generation:
    name_prefix: str  # XPK accelerator-name prefix
    accelerator_label: str  # value of the cloud.google.com/gke-tpu-accelerator node label
    pathways_prefix: str  # Pathways instance type prefix
    tensorcores_per_chip: int  # accelerator names count tensorcores, not chips
    offers: tuple[Offer, ...]
    # topologies that own the '<prefix>-<cores>' name when several share a core count
    named: frozenset[str] = frozenset()
    # GKE places multi-host slices with a workload policy, not a TPU topology (Ironwood)
    workload_policy: bool = False
    # Pools get accelerator_network_profile "auto" and the networking DRA driver label, as XPK
    # creates them (xpk system_characteristics.py: supports_accelerator_network_profile is true
    # for v6e among the TPUs; core/nodepool.py adds the flag and the label)
    accelerator_network_profile: bool = False


_PLANAR = ("2x4", "4x4", "4x8", "8x8", "8x16", "16x16")

# XPK's v5p default_topologies, identical (same 96 entries, same order, one per core count) to
# the PathwaysJob v0.1.4 ValidTpuTopologiesMap["ct5p-hightpu-4t"]. Data, not a rule: the other
# 31 core counts XPK names have no entry and go to the first generated topology instead.
_V5P_NAMED = (
    "2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x4x12", "4x8x8",
    "4x4x20", "4x8x12", "4x4x28", "8x8x8", "4x12x12", "4x8x20", "4x4x44", "8x8x12",
    "4x4x52", "4x8x28", "4x12x20", "8x8x16", "4x4x68", "8x12x12", "4x4x76", "8x8x20",
    "4x12x28", "4x8x44", "4x4x92", "8x12x16", "4x20x20", "4x8x52", "12x12x12", "8x8x28",
    "4x4x116", "8x12x20", "4x4x124", "8x16x16", "4x12x44", "4x8x68", "4x20x28", "12x12x16",
    "4x4x148", "4x8x76", "4x12x52", "8x16x20", "4x4x164", "8x12x28", "4x4x172", "8x8x44",
    "12x12x20", "4x8x92", "4x4x188", "12x16x16", "4x28x28", "8x20x20", "4x12x68", "8x8x52",
    "4x4x212", "12x12x24", "4x20x44", "8x16x28", "4x12x76", "4x8x116", "4x4x236", "12x16x20",
    "4x4x244", "4x8x124", "12x12x28", "16x16x16", "4x20x52", "8x12x44", "8x8x68", "4x12x92",
    "8x20x28", "12x16x24", "4x8x148", "12x20x20", "8x8x76", "4x28x44", "8x12x52", "16x16x20",
    "12x12x36", "4x8x164", "12x16x28", "4x20x68", "4x8x172", "4x12x116", "8x16x44", "12x20x24",
    "4x28x52", "8x8x92", "4x12x124", "4x8x188", "4x20x76", "16x16x24", "12x24x24", "16x20x28",
)  # fmt: skip


# XPK's v4 default_topologies: they own their '<prefix>-<cores>' name; the other core counts go
# to the first generated topology.
_V4_NAMED = (
    "2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x12", "8x8x16",
    "8x16x16",
)  # fmt: skip
# The PathwaysJob v0.1.4 controller's v4 list: XPK's v4 defaults plus 4x4x16 and 4x16x16.
_V4_PATHWAYS = (
    "2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "4x4x16", "8x8x8", "8x8x12",
    "8x8x16", "4x16x16", "8x16x16",
)  # fmt: skip
# XPK's tpu7x default_topologies = v5p's plus the two shapes only 144 cubes allow; the same 98
# topologies as the PathwaysJob v0.1.4 ValidTpuTopologiesMap["tpu7x-standard-4t"].
_TPU7X_NAMED = (*_V5P_NAMED, "16x16x32", "16x24x24")
_SUB_CUBES = ("2x2x1", "2x2x2", "2x2x4", "2x4x4")


def _cube_topologies(max_cubes: int, nondecreasing: bool = True) -> tuple[str, ...]:
    """XPK's 3D rule (generate_tpu_topologies): four sub-cube slices, then AxBxC (multiples of 4
    up to 256; A<=B<=C unless ``nondecreasing`` is off, as for v4) made of at most ``max_cubes``
    4x4x4 cubes. Order matters: it is XPK's iteration order, which decides shared names."""
    cubes = []
    for a in range(1, 65):  # sides in cubes: 4 .. 256 chips
        for b in range(a if nondecreasing else 1, min(64, max_cubes // a) + 1):
            cubes += (
                f"{4 * a}x{4 * b}x{4 * c}"
                for c in range(b if nondecreasing else 1, min(64, max_cubes // (a * b)) + 1)
            )
    return (*_SUB_CUBES, *cubes)


GENERATIONS: dict[TpuGeneration, Generation] = {
    TpuGeneration.V4: Generation(
        name_prefix="v4",
        accelerator_label="tpu-v4-podslice",
        pathways_prefix="tpuv4",
        tensorcores_per_chip=2,
        # XPK lists every order of the dimensions for v4 (4x4x8, 4x8x4, 8x4x4 are three shapes).
        offers=(Offer("ct4p-hightpu-4t", _cube_topologies(64, nondecreasing=False)),),
        named=frozenset(_V4_NAMED),
    ),
    TpuGeneration.V5E: Generation(
        name_prefix="v5litepod",
        accelerator_label="tpu-v5-lite-podslice",
        pathways_prefix="tpuv5e",
        tensorcores_per_chip=1,
        offers=(
            Offer("ct5lp-hightpu-1t", ("1x1",), default=False),
            Offer("ct5lp-hightpu-4t", ("2x2",), default=False),
            Offer("ct5lp-hightpu-4t", _PLANAR),
            Offer("ct5lp-hightpu-8t", ("2x4",), default=False),
        ),
    ),
    TpuGeneration.V5P: Generation(
        name_prefix="v5p",
        accelerator_label="tpu-v5p-slice",
        pathways_prefix="tpuv5",  # not "tpuv5p"
        tensorcores_per_chip=2,
        offers=(Offer("ct5p-hightpu-4t", _cube_topologies(140)),),
        named=frozenset(_V5P_NAMED),
    ),
    TpuGeneration.V6E: Generation(
        name_prefix="v6e",
        accelerator_label="tpu-v6e-slice",
        pathways_prefix="tpuv6e",
        tensorcores_per_chip=1,
        accelerator_network_profile=True,
        offers=(
            Offer("ct6e-standard-1t", ("1x1",)),
            Offer("ct6e-standard-4t", ("2x2", *_PLANAR)),
            Offer("ct6e-standard-8t", ("2x4",), default=False),
        ),
    ),
    TpuGeneration.TPU7X: Generation(
        name_prefix="tpu7x",
        accelerator_label="tpu7x",
        pathways_prefix="tpu7x",
        tensorcores_per_chip=2,
        offers=(
            Offer("tpu7x-standard-1t", ("1x1x1",)),
            Offer("tpu7x-standard-4t", _cube_topologies(144)),
        ),
        named=frozenset(_TPU7X_NAMED),
        workload_policy=True,
    ),
    TpuGeneration.TPU7: Generation(
        name_prefix="tpu7",
        accelerator_label="tpu7",
        pathways_prefix="tpu7",
        tensorcores_per_chip=2,
        offers=(
            Offer("tpu7-standard-1t", ("1x1x1",)),
            Offer("tpu7-standard-4t", _cube_topologies(4)),
        ),
        named=frozenset(_cube_topologies(4)),  # XPK names all nine as defaults
        workload_policy=True,
    ),
}

# PathwaysJob controller v0.1.4: topologies it accepts per worker machine type. Machine types
# missing here (the 1t ones, all of tpu7) are rejected by its CRD enum. Its ct6e-standard-4t
# list also has 1x1, unreachable here: GKE's v6e 1x1 is ct6e-standard-1t. Its v4 list has 13
# entries, two of them (4x4x16, 4x16x16) not XPK defaults.
PATHWAYS_TOPOLOGIES: dict[str, tuple[str, ...]] = {
    "ct4p-hightpu-4t": _V4_PATHWAYS,
    "ct5lp-hightpu-4t": ("2x2", *_PLANAR),
    "ct5lp-hightpu-8t": ("2x4",),
    "ct5p-hightpu-4t": _V5P_NAMED,
    "ct6e-standard-4t": ("1x1", "2x2", *_PLANAR),
    "ct6e-standard-8t": ("2x4",),
    "tpu7x-standard-4t": _TPU7X_NAMED,
}
# pathwaysutils' shared-service client validates instance types with this pattern
# (experimental/shared_pathways_service/validators.py): no tpuv4, tpu7 or '1t' prefixes.
PATHWAYSUTILS_INSTANCE = re.compile(r"tpu(v5e|v5|v6e|7x):\d+(x\d+){1,2}")
# The controller names 8-chip-host slices with their own instance-type prefixes.
PATHWAYS_PREFIX_BY_MACHINE = {"ct5lp-hightpu-8t": "tpuv5e1t", "ct6e-standard-8t": "tpuv6e1t"}
