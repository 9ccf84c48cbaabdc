"""TPU slice shapes (v5e, v5p, v6e): topology, machine type, hosts, names.

One small table per generation is the single source of truth; every shape is generated from it.
Without a machine type the catalog offers exactly what XPK 1.16 offers (its accelerator names,
``v5litepod-16``, ``v5p-4x4x4``, ``v6e-4`` ...). GKE's extra single-host machine types
(v5e ``ct5lp-hightpu-1t`` 1x1, ``ct5lp-hightpu-4t`` 2x2, ``ct5lp-hightpu-8t`` 2x4 and v6e
``ct6e-standard-8t`` 2x4) are offered only when the machine type is named, because XPK has no
name for them and "v5e 2x4" means XPK's two 4-chip hosts. Their accelerator names carry the
machine type's chip count so they never collide with XPK's: ``v5litepod-8-8t``, ``v6e-8-8t``,
``v5litepod-1-1t``, ``v5litepod-4-4t`` (the topology form works too: ``v5litepod-2x4-8t``).

Sources: xpk 1.16.0 ``xpk/core/system_characteristics.py`` (checked against the fixture
``tests/data/xpk_1_16_tpu_shapes.json``) and google/pathways-job v0.1.4
``internal/controller/pathwaysjob_controller.go`` (which machine types and topologies a
PathwaysJob accepts, and the instance-type prefixes).
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from enum import StrEnum


class CatalogError(ValueError):
    """An unknown generation, topology, machine type or accelerator name (message is one line)."""


class TpuGeneration(StrEnum):
    V5E = "v5e"
    V5P = "v5p"
    V6E = "v6e"


@dataclass(frozen=True)
class _Offer:
    """Topologies one machine type provides; ``default`` = chosen when no machine type is given."""

    machine_type: str
    topologies: tuple[str, ...]  # in XPK's generation order (it decides shared v5p names)
    default: bool = True


@dataclass(frozen=True)
class _Generation:
    name_prefix: str  # XPK accelerator-name prefix
    accelerator_label: str  # value of the cloud.google.com/gke-tpu-accelerator node label
    pathways_prefix: str  # Pathways instance type prefix
    tensorcores_per_chip: int  # accelerator names count tensorcores, not chips
    offers: tuple[_Offer, ...]
    # topologies that own the '<prefix>-<cores>' name when several share a core count
    named: frozenset[str] = frozenset()


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


def _v5p_topologies(max_cubes: int = 140) -> tuple[str, ...]:
    """XPK's v5p rule: four sub-cube slices, then AxBxC (A<=B<=C, multiples of 4 up to 256)
    made of at most ``max_cubes`` 4x4x4 cubes. Order matters: it is XPK's iteration order."""
    sides = range(4, 257, 4)
    cubes = (
        f"{a}x{b}x{c}"
        for a in sides
        for b in sides
        if b >= a
        for c in sides
        if c >= b and (a // 4) * (b // 4) * (c // 4) <= max_cubes
    )
    return ("2x2x1", "2x2x2", "2x2x4", "2x4x4", *cubes)


_GENERATIONS: dict[TpuGeneration, _Generation] = {
    TpuGeneration.V5E: _Generation(
        name_prefix="v5litepod",
        accelerator_label="tpu-v5-lite-podslice",
        pathways_prefix="tpuv5e",
        tensorcores_per_chip=1,
        offers=(
            _Offer("ct5lp-hightpu-1t", ("1x1",), default=False),
            _Offer("ct5lp-hightpu-4t", ("2x2",), default=False),
            _Offer("ct5lp-hightpu-4t", _PLANAR),
            _Offer("ct5lp-hightpu-8t", ("2x4",), default=False),
        ),
    ),
    TpuGeneration.V5P: _Generation(
        name_prefix="v5p",
        accelerator_label="tpu-v5p-slice",
        pathways_prefix="tpuv5",  # not "tpuv5p"
        tensorcores_per_chip=2,
        offers=(_Offer("ct5p-hightpu-4t", _v5p_topologies()),),
        named=frozenset(_V5P_NAMED),
    ),
    TpuGeneration.V6E: _Generation(
        name_prefix="v6e",
        accelerator_label="tpu-v6e-slice",
        pathways_prefix="tpuv6e",
        tensorcores_per_chip=1,
        offers=(
            _Offer("ct6e-standard-1t", ("1x1",)),
            _Offer("ct6e-standard-4t", ("2x2", *_PLANAR)),
            _Offer("ct6e-standard-8t", ("2x4",), default=False),
        ),
    ),
}

# PathwaysJob controller v0.1.4: topologies it accepts per worker machine type. Machine types
# missing here (the 1t ones) are rejected by its CRD enum. Its ct6e-standard-4t list also has
# 1x1, unreachable here: GKE's v6e 1x1 is ct6e-standard-1t.
_PATHWAYS_TOPOLOGIES: dict[str, tuple[str, ...]] = {
    "ct5lp-hightpu-4t": ("2x2", *_PLANAR),
    "ct5lp-hightpu-8t": ("2x4",),
    "ct5p-hightpu-4t": _V5P_NAMED,
    "ct6e-standard-4t": ("1x1", "2x2", *_PLANAR),
    "ct6e-standard-8t": ("2x4",),
}
# The controller names 8-chip-host slices with their own instance-type prefixes.
_PATHWAYS_PREFIX_BY_MACHINE = {"ct5lp-hightpu-8t": "tpuv5e1t", "ct6e-standard-8t": "tpuv6e1t"}


@dataclass(frozen=True)
class TpuShape:
    """One TPU slice: build it with shape_for() or resolve_accelerator(), not by hand."""

    generation: TpuGeneration
    topology: str  # "4x4", "2x2x2"
    machine_type: str  # "ct5lp-hightpu-4t"
    chips_per_host: int

    @property
    def dims(self) -> tuple[int, ...]:
        return _dims(self.topology)

    @property
    def chips(self) -> int:
        return math.prod(self.dims)

    @property
    def hosts(self) -> int:
        return self.chips // self.chips_per_host

    @property
    def needs_accelerator_network_profile(self) -> bool:
        """v6e pools get accelerator_network_profile "auto" and the networking DRA driver label,
        as XPK creates them (xpk system_characteristics.py: supports_accelerator_network_profile
        is true for v6e among the TPUs; core/nodepool.py adds the flag and the label)."""
        return self.generation is TpuGeneration.V6E

    @property
    def multi_host(self) -> bool:
        return self.hosts > 1

    @property
    def tensorcores_per_chip(self) -> int:
        return _GENERATIONS[self.generation].tensorcores_per_chip

    @property
    def tensorcores(self) -> int:
        return self.chips * self.tensorcores_per_chip

    @property
    def accelerator_label(self) -> str:
        return _GENERATIONS[self.generation].accelerator_label

    @property
    def accelerator_name(self) -> str:
        """Shortest name that resolves back to this shape: XPK's '<prefix>-<cores>' when it is
        ours, else '<prefix>-<topology>'; non-XPK shapes add the machine's '-<N>t' suffix."""
        gen = _GENERATIONS[self.generation]
        by_cores = f"{gen.name_prefix}-{self.tensorcores}"
        if not self.is_xpk_default:
            return f"{by_cores}-{self.chips_per_host}t"
        if _INDEX.names[by_cores] == self:
            return by_cores
        return f"{gen.name_prefix}-{self.topology}"

    @property
    def is_xpk_default(self) -> bool:
        """True when this is the shape chosen for its topology without a machine type."""
        return _INDEX.defaults.get((self.generation, self.topology)) == self

    @property
    def pathways_instance_type(self) -> str:
        prefix = _PATHWAYS_PREFIX_BY_MACHINE.get(
            self.machine_type, _GENERATIONS[self.generation].pathways_prefix
        )
        return f"{prefix}:{self.topology}"

    @property
    def pathways_supported(self) -> bool:
        """The PathwaysJob controller v0.1.4 accepts this machine type with this topology."""
        return self.topology in _PATHWAYS_TOPOLOGIES.get(self.machine_type, ())


def _dims(topology: str) -> tuple[int, ...]:
    return tuple(int(d) for d in topology.split("x"))


def _chips_per_host(machine_type: str) -> int:
    # GKE TPU machine types end in '-<chips per VM>t' (ct5lp-hightpu-4t, ct6e-standard-1t).
    match = re.fullmatch(r".*-(\d+)t", machine_type)
    if not match:
        raise AssertionError(f"TPU machine type without a chip count: {machine_type}")
    return int(match.group(1))


def _sort_key(shape: TpuShape) -> tuple:
    return (list(TpuGeneration).index(shape.generation), shape.chips, shape.dims, shape.hosts)


class _Index:
    """Lookup tables built once from _GENERATIONS."""

    def __init__(self) -> None:
        self.shapes: dict[tuple[TpuGeneration, str, str], TpuShape] = {}
        self.defaults: dict[tuple[TpuGeneration, str], TpuShape] = {}
        self.names: dict[str, TpuShape] = {}
        for generation, gen in _GENERATIONS.items():
            for offer in gen.offers:
                for topology in offer.topologies:
                    self._add(generation, gen, offer, topology)

    def _add(self, generation: TpuGeneration, gen: _Generation, offer: _Offer, topology: str):
        cph = _chips_per_host(offer.machine_type)
        shape = TpuShape(generation, topology, offer.machine_type, cph)
        self.shapes[(generation, offer.machine_type, topology)] = shape
        by_cores = f"{gen.name_prefix}-{shape.tensorcores}"
        if not offer.default:
            self.names[f"{by_cores}-{cph}t"] = shape
            self.names[f"{gen.name_prefix}-{topology}-{cph}t"] = shape
            return
        self.defaults[(generation, topology)] = shape
        self.names[f"{gen.name_prefix}-{topology}"] = shape
        # XPK: a shared core-count name goes to the listed topology, else the first generated.
        if topology in gen.named or by_cores not in self.names:
            self.names[by_cores] = shape


_INDEX = _Index()


def _generation(generation: TpuGeneration | str) -> TpuGeneration:
    try:
        return TpuGeneration(str(generation).strip().lower())
    except ValueError:
        valid = ", ".join(g.value for g in TpuGeneration)
        raise CatalogError(
            f"'{generation}' is not a supported TPU generation; valid: {valid}"
        ) from None


def _listing(values: list[str], limit: int = 8) -> str:
    if len(values) <= limit:
        return ", ".join(values)
    return f"{', '.join(values[:limit])}, ... ({len(values)} in all)"


def _did_you_mean(value: str, choices: list[str]) -> str:
    hint = difflib.get_close_matches(value, choices, n=1)
    return f"; did you mean '{hint[0]}'?" if hint else ""


def machine_types(generation: TpuGeneration | str) -> list[str]:
    """Machine types of a generation, smallest host first."""
    gen = _GENERATIONS[_generation(generation)]
    return list(dict.fromkeys(offer.machine_type for offer in gen.offers))


def _shapes(generation: TpuGeneration, machine_type: str | None) -> list[TpuShape]:
    if machine_type is None:
        found = [s for (g, _), s in _INDEX.defaults.items() if g == generation]
    else:
        found = [
            s for (g, m, _), s in _INDEX.shapes.items() if (g, m) == (generation, machine_type)
        ]
    return sorted(found, key=_sort_key)


def _check_machine_type(generation: TpuGeneration, machine_type: str) -> str:
    known = machine_types(generation)
    if machine_type not in known:
        raise CatalogError(
            f"'{machine_type}' is not a {generation} machine type; valid: {', '.join(known)}"
        )
    return machine_type


def topologies(generation: TpuGeneration | str, machine_type: str | None = None) -> list[str]:
    """Valid topologies by chip count, then dimensions. Without a machine type: XPK's set."""
    gen = _generation(generation)
    if machine_type is not None:
        machine_type = _check_machine_type(gen, machine_type.strip().lower())
    return [s.topology for s in _shapes(gen, machine_type)]


def shape_for(
    generation: TpuGeneration | str, topology: str, machine_type: str | None = None
) -> TpuShape:
    """The slice for a topology; without a machine type, XPK's choice (v5e 2x4 = two 4t hosts)."""
    gen = _generation(generation)
    wanted = str(topology).strip().lower()
    if machine_type is None:
        shape = _INDEX.defaults.get((gen, wanted))
        if shape is None:
            raise CatalogError(_bad_topology(gen, topology, None) + _needs_machine(gen, wanted))
        return shape
    machine = _check_machine_type(gen, machine_type.strip().lower())
    shape = _INDEX.shapes.get((gen, machine, wanted))
    if shape is None:
        raise CatalogError(_bad_topology(gen, topology, machine))
    return shape


def _bad_topology(gen: TpuGeneration, topology: str, machine_type: str | None) -> str:
    valid = topologies(gen, machine_type)
    where = f"{gen} topology" + (f" for {machine_type}" if machine_type else "")
    return f"'{topology}' is not a {where}; valid: {_listing(valid)}{_reordered(topology, valid)}"


def _reordered(topology: str, valid: list[str]) -> str:
    # XPK spells each topology with non-decreasing dimensions: hint at '4x4x8' for '4x8x4'.
    try:
        candidate = "x".join(str(d) for d in sorted(_dims(topology.strip().lower())))
    except ValueError:
        return ""
    return f"; did you mean '{candidate}'?" if candidate in valid else ""


def _needs_machine(gen: TpuGeneration, topology: str) -> str:
    # Point at the explicit-only shapes (v5e 1x1/2x2, 8t) instead of just refusing them.
    machines = [m for (g, m, t) in _INDEX.shapes if (g, t) == (gen, topology)]
    return f" ({topology} needs machine type {' or '.join(machines)})" if machines else ""


def resolve_accelerator(name: str) -> TpuShape:
    """An XPK accelerator name ('v5litepod-16', 'v5p-4x4x4', 'v6e-4') or a catalog '-<N>t' name."""
    wanted = str(name).strip().lower()
    shape = _INDEX.names.get(wanted)
    if shape is None:
        # 'v5litepod-4' has no XPK name but is one machine type away: 'v5litepod-4-4t'.
        suffixed = [n for n in _INDEX.names if re.fullmatch(re.escape(wanted) + r"-\d+t", n)]
        hint = _did_you_mean(wanted, suffixed or list(_INDEX.names))
        example = "" if hint else "; expected e.g. v5litepod-16, v5p-128, v5p-4x4x4, v6e-4"
        raise CatalogError(f"'{name}' is not a known TPU accelerator{hint or example}")
    return shape


def all_shapes() -> list[TpuShape]:
    """Every shape, by generation, chips, dimensions, then hosts."""
    return sorted(_INDEX.shapes.values(), key=_sort_key)


def accelerator_names() -> list[str]:
    """Every name resolve_accelerator() accepts, in all_shapes() order, canonical name first."""
    order = {shape: i for i, shape in enumerate(all_shapes())}
    canonical = {shape.accelerator_name for shape in order}
    return sorted(_INDEX.names, key=lambda n: (order[_INDEX.names[n]], n not in canonical, n))
