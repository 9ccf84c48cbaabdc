"""TPU slice shapes (v4, v5e, v5p, v6e, tpu7x Ironwood, tpu7): topology, machine type, hosts, names.

One small table per generation is the single source of truth; every shape is generated from it.
Without a machine type the catalog offers exactly what XPK 1.16 offers (its accelerator names,
``v5litepod-16``, ``v5p-4x4x4``, ``v6e-4`` ...). GKE's extra single-host machine types
(v5e ``ct5lp-hightpu-1t`` 1x1, ``ct5lp-hightpu-4t`` 2x2, ``ct5lp-hightpu-8t`` 2x4 and v6e
``ct6e-standard-8t`` 2x4) are offered only when the machine type is named, because XPK has no
name for them and "v5e 2x4" means XPK's two 4-chip hosts. Their accelerator names carry the
machine type's chip count so they never collide with XPK's: ``v5litepod-8-8t``, ``v6e-8-8t``,
``v5litepod-1-1t``, ``v5litepod-4-4t`` (the topology form works too: ``v5litepod-2x4-8t``).

Sources: xpk 1.16.0 ``xpk/core/system_characteristics.py`` (all 2,020 TPU names it accepts are
checked against the fixture ``tests/data/xpk_1_16_tpu_shapes.json``), google/pathways-job v0.1.4
``internal/controller/pathwaysjob_controller.go`` (which machine types and topologies a
PathwaysJob accepts, and the instance-type prefixes) and AI-Hypercomputer/pathways-utils
``experimental/shared_pathways_service/validators.py`` (the instance types its client accepts).
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
    V4 = "v4"
    V5E = "v5e"
    V5P = "v5p"
    V6E = "v6e"
    TPU7X = "tpu7x"  # Ironwood
    TPU7 = "tpu7"


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
    # GKE places multi-host slices with a workload policy, not a TPU topology (Ironwood)
    workload_policy: bool = False


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


_GENERATIONS: dict[TpuGeneration, _Generation] = {
    TpuGeneration.V4: _Generation(
        name_prefix="v4",
        accelerator_label="tpu-v4-podslice",
        pathways_prefix="tpuv4",
        tensorcores_per_chip=2,
        # XPK lists every order of the dimensions for v4 (4x4x8, 4x8x4, 8x4x4 are three shapes).
        offers=(_Offer("ct4p-hightpu-4t", _cube_topologies(64, nondecreasing=False)),),
        named=frozenset(_V4_NAMED),
    ),
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
        offers=(_Offer("ct5p-hightpu-4t", _cube_topologies(140)),),
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
    TpuGeneration.TPU7X: _Generation(
        name_prefix="tpu7x",
        accelerator_label="tpu7x",
        pathways_prefix="tpu7x",
        tensorcores_per_chip=2,
        offers=(
            _Offer("tpu7x-standard-1t", ("1x1x1",)),
            _Offer("tpu7x-standard-4t", _cube_topologies(144)),
        ),
        named=frozenset(_TPU7X_NAMED),
        workload_policy=True,
    ),
    TpuGeneration.TPU7: _Generation(
        name_prefix="tpu7",
        accelerator_label="tpu7",
        pathways_prefix="tpu7",
        tensorcores_per_chip=2,
        offers=(
            _Offer("tpu7-standard-1t", ("1x1x1",)),
            _Offer("tpu7-standard-4t", _cube_topologies(4)),
        ),
        named=frozenset(_cube_topologies(4)),  # XPK names all nine as defaults
        workload_policy=True,
    ),
}

# PathwaysJob controller v0.1.4: topologies it accepts per worker machine type. Machine types
# missing here (the 1t ones, all of tpu7) are rejected by its CRD enum. Its ct6e-standard-4t
# list also has 1x1, unreachable here: GKE's v6e 1x1 is ct6e-standard-1t. Its v4 list has 13
# entries, two of them (4x4x16, 4x16x16) not XPK defaults.
_PATHWAYS_TOPOLOGIES: dict[str, tuple[str, ...]] = {
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
_PATHWAYSUTILS_INSTANCE = re.compile(r"tpu(v5e|v5|v6e|7x):\d+(x\d+){1,2}")
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
    def needs_workload_policy(self) -> bool:
        """GKE creates this slice's node pool with a workload policy (XPK: multi-host tpu7x and
        tpu7, ``requires_workload_policy``) instead of a TPU topology."""
        return _GENERATIONS[self.generation].workload_policy and self.multi_host

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

    @property
    def pathwaysutils_supported(self) -> bool:
        """pathwaysutils' shared-service client accepts this shape's instance type."""
        return _PATHWAYSUTILS_INSTANCE.fullmatch(self.pathways_instance_type) is not None


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
        self.machine_types: dict[str, TpuGeneration] = {}
        for generation, gen in _GENERATIONS.items():
            for offer in gen.offers:
                self.machine_types[offer.machine_type] = generation
                for topology in offer.topologies:
                    self._add(generation, gen, offer, topology)
        self.names_by_shape: dict[TpuShape, list[str]] = {}
        for name, shape in self.names.items():
            self.names_by_shape.setdefault(shape, []).append(name)

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


# GKE names TPU VM machine types '<family>-<kind>-<chips>t': ct4p-hightpu-4t, ct5lp-hightpu-8t,
# ct6e-standard-1t, tpu7x-standard-4t. The pattern also recognises ones the catalog lacks.
_TPU_MACHINE_TYPE = re.compile(r"(ct\d+[a-z]*|tpu\d+[a-z]*)-[a-z]+-\d+t")


def is_tpu_machine_type(name: object) -> bool:
    """True for a GKE TPU VM machine type (every generation, known to the catalog or not)."""
    return isinstance(name, str) and (
        name in _INDEX.machine_types or _TPU_MACHINE_TYPE.fullmatch(name) is not None
    )


def generation_of_machine_type(name: str) -> TpuGeneration | None:
    """The TPU generation a catalog machine type belongs to (None if the catalog lacks it)."""
    return _INDEX.machine_types.get(name)


def places_with_workload_policy(machine_type: str) -> bool:
    """True when GKE places multi-host slices of this TPU machine type with a workload policy
    (Ironwood tpu7x, tpu7) instead of COMPACT placement with a TPU topology."""
    generation = generation_of_machine_type(machine_type)
    return generation is not None and _GENERATIONS[generation].workload_policy


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
    """An XPK accelerator name ('v5litepod-16', 'v5p-4x4x4', 'v6e-4', 'v4-8', 'tpu7x-128') or a
    catalog '-<N>t' name ('v5litepod-8-8t')."""
    wanted = str(name).strip().lower()
    shape = _INDEX.names.get(wanted)
    if shape is None:
        raise CatalogError(f"'{name}' is not a known TPU accelerator{_name_hint(wanted)}")
    return shape


def _name_prefix(head: str) -> str | None:
    """The accelerator-name prefix a user meant: 'v4', 'v5litepod' (also typed 'v5e' or, as a
    typo, 'v5litpod') ..."""
    aliases = {g.value: gen.name_prefix for g, gen in _GENERATIONS.items()}
    aliases.update({gen.name_prefix: gen.name_prefix for gen in _GENERATIONS.values()})
    if head in aliases:
        return aliases[head]
    close = difflib.get_close_matches(head, list(aliases), n=1)
    return aliases[close[0]] if close else None


def _name_hint(wanted: str) -> str:
    """A suggestion from the generation the user typed only: 'v4-17' never suggests 'v6e-16'."""
    head, _, rest = wanted.partition("-")
    prefix = _name_prefix(head)
    if prefix is None or not rest:
        prefixes = ", ".join(gen.name_prefix for gen in _GENERATIONS.values())
        return (
            f"; expected <prefix>-<tensorcores> or <prefix>-<topology> with prefix one of "
            f"{prefixes}, e.g. v5litepod-16, v5p-4x4x4, v6e-4, tpu7x-128"
        )
    canonical = f"{prefix}-{rest}"
    if canonical in _INDEX.names:  # 'v5e-16' is spelled 'v5litepod-16'
        return f"; did you mean '{canonical}'?"
    own = [n for n in _INDEX.names if n.startswith(f"{prefix}-")]
    # 'v5litepod-4' has no XPK name but is one machine type away: 'v5litepod-4-4t'.
    suffixed = [n for n in own if re.fullmatch(re.escape(canonical) + r"-\d+t", n)]
    if suffixed:
        return _did_you_mean(canonical, suffixed)
    if rest.isdigit():  # a core count: the nearest one of this generation ('v4-17' -> 'v4-16')
        counts = sorted({int(n.rpartition("-")[2]) for n in own if re.fullmatch(r"[^-]+-\d+", n)})
        nearest = min(counts, key=lambda c: (abs(c - int(rest)), c))
        return f"; did you mean '{prefix}-{nearest}'?"
    reordered = _reordered(rest, [n.partition("-")[2] for n in own])  # 'v5p-4x8x4' -> 4x4x8
    hint = reordered.replace("'", f"'{prefix}-", 1) if reordered else _did_you_mean(canonical, own)
    return hint or f"; no {prefix} name is close (python -m components shapes lists all {len(own)})"


def accepted_names(shape: TpuShape) -> list[str]:
    """Every name that resolves to this shape, its canonical accelerator_name first."""
    names = _INDEX.names_by_shape.get(shape, [])
    return sorted(names, key=lambda n: (n != shape.accelerator_name, len(n), n))


def all_shapes() -> list[TpuShape]:
    """Every shape, by generation, chips, dimensions, then hosts."""
    return sorted(_INDEX.shapes.values(), key=_sort_key)
