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

from components.tpu.generations import (
    GENERATIONS,
    PATHWAYS_PREFIX_BY_MACHINE,
    PATHWAYS_TOPOLOGIES,
    PATHWAYSUTILS_INSTANCE,
    Generation,
    Offer,
    TpuGeneration,
)


class CatalogError(ValueError):
    """An unknown generation, topology, machine type or accelerator name (message is one line)."""


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
        """Whether the pool gets accelerator_network_profile "auto" and the networking DRA
        driver label (a fact of the generation: ``Generation.accelerator_network_profile``)."""
        return GENERATIONS[self.generation].accelerator_network_profile

    @property
    def multi_host(self) -> bool:
        return self.hosts > 1

    @property
    def tensorcores_per_chip(self) -> int:
        return GENERATIONS[self.generation].tensorcores_per_chip

    @property
    def tensorcores(self) -> int:
        return self.chips * self.tensorcores_per_chip

    @property
    def accelerator_label(self) -> str:
        return GENERATIONS[self.generation].accelerator_label

    @property
    def accelerator_name(self) -> str:
        """Shortest name that resolves back to this shape: XPK's '<prefix>-<cores>' when it is
        ours, else '<prefix>-<topology>'; non-XPK shapes add the machine's '-<N>t' suffix."""
        gen = GENERATIONS[self.generation]
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
        return GENERATIONS[self.generation].workload_policy and self.multi_host

    @property
    def is_xpk_default(self) -> bool:
        """True when this is the shape chosen for its topology without a machine type."""
        return _INDEX.defaults.get((self.generation, self.topology)) == self

    @property
    def pathways_instance_type(self) -> str:
        return pathways_instance_type(self.generation, self.machine_type, self.topology)

    @property
    def pathways_supported(self) -> bool:
        """The PathwaysJob controller v0.1.4 accepts this machine type with this topology."""
        return self.topology in PATHWAYS_TOPOLOGIES.get(self.machine_type, ())

    @property
    def pathwaysutils_supported(self) -> bool:
        """pathwaysutils' shared-service client accepts this shape's instance type."""
        return PATHWAYSUTILS_INSTANCE.fullmatch(self.pathways_instance_type) is not None


def pathways_instance_type(generation: TpuGeneration, machine_type: str, topology: str) -> str:
    """The resource manager's ``--instance_type`` for slices of this machine type and topology
    (``tpuv5:2x2x2``; 8-chip hosts have their own prefix, ``tpuv5e1t:2x4``)."""
    prefix = PATHWAYS_PREFIX_BY_MACHINE.get(machine_type, GENERATIONS[generation].pathways_prefix)
    return f"{prefix}:{topology}"


def _dims(topology: str) -> tuple[int, ...]:
    return tuple(int(d) for d in topology.split("x"))


def _chips_per_host(machine_type: str) -> int:
    # GKE TPU machine types end in '-<chips per VM>t' (ct5lp-hightpu-4t, ct6e-standard-1t).
    match = re.fullmatch(r".*-(\d+)t", machine_type)
    if not match:
        raise AssertionError(f"TPU machine type without a chip count: {machine_type}")
    return int(match.group(1))


_GENERATION_ORDER = {generation: i for i, generation in enumerate(TpuGeneration)}


def _sort_key(shape: TpuShape) -> tuple:
    dims = shape.dims
    chips = math.prod(dims)
    return (_GENERATION_ORDER[shape.generation], chips, dims, chips // shape.chips_per_host)


class _Index:
    """Lookup tables built once from GENERATIONS."""

    def __init__(self) -> None:
        self.shapes: dict[tuple[TpuGeneration, str, str], TpuShape] = {}
        self.defaults: dict[tuple[TpuGeneration, str], TpuShape] = {}
        self.names: dict[str, TpuShape] = {}
        self.machine_types: dict[str, TpuGeneration] = {}
        for generation, gen in GENERATIONS.items():
            for offer in gen.offers:
                self.machine_types[offer.machine_type] = generation
                for topology in offer.topologies:
                    self._add(generation, gen, offer, topology)
        self.names_by_shape: dict[TpuShape, list[str]] = {}
        for name, shape in self.names.items():
            self.names_by_shape.setdefault(shape, []).append(name)

    def _add(self, generation: TpuGeneration, gen: Generation, offer: Offer, topology: str):
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
    return generation is not None and GENERATIONS[generation].workload_policy


def machine_types(generation: TpuGeneration | str) -> list[str]:
    """Machine types of a generation, smallest host first."""
    gen = GENERATIONS[_generation(generation)]
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


def shapes_command(generation: TpuGeneration | str) -> str:
    """The command that lists a generation's shapes: every topology message points to it."""
    return f"python -m components shapes {TpuGeneration(generation).value}"


def _bad_topology(gen: TpuGeneration, topology: str, machine_type: str | None) -> str:
    valid = topologies(gen, machine_type)
    where = f"{gen} topology" + (f" for {machine_type}" if machine_type else "")
    shown = _listing(valid)
    listed = (
        f"{shown[:-1]}: {shapes_command(gen)})"
        if shown.endswith(" in all)")
        else f"{shown} ({shapes_command(gen)})"
    )
    return f"'{topology}' is not a {where}; valid: {listed}{_reordered(topology, valid)}"


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
    return f"; {topology} needs machine type {' or '.join(machines)}" if machines else ""


def worker_shape(machine_type: str, topology: str) -> TpuShape:
    """The slice a PathwaysJob's worker names (machine type and topology), refused unless the
    PathwaysJob controller v0.1.4 accepts it; the message names the nearest topologies it does."""
    generation = generation_of_machine_type(machine_type)
    if generation is None:
        raise CatalogError(f"'{machine_type}' is not a TPU machine type of the catalog")
    shape = _INDEX.shapes.get((generation, machine_type, str(topology).strip().lower()))
    if shape is not None and shape.pathways_supported:
        return shape  # one lookup: every PathwaysJob spec built passes here
    shapes = [s for s in _shapes(generation, machine_type) if s.pathways_supported]
    what = "is not a topology" if shape is None else "is a topology the PathwaysJob controller"
    what += f" of {machine_type}" if shape is None else f" v0.1.4 rejects for {machine_type}"
    nearest = _nearest(topology, [s.topology for s in shapes], generation)
    raise CatalogError(f"'{topology}' {what}; nearest valid: {nearest}")


def _nearest(topology: str, valid: list[str], generation: TpuGeneration, count: int = 4) -> str:
    """Up to ``count`` of ``valid`` closest in chips to ``topology``, smallest first."""
    try:
        chips = math.prod(_dims(str(topology).strip().lower()))
    except ValueError:
        chips = 0
    close = sorted(valid, key=lambda t: abs(math.log(math.prod(_dims(t)) / max(chips, 1))))
    nearest = [t for t in valid if t in close[:count]]
    more = f"{len(valid)} in all: " if len(valid) > count else ""
    return f"{', '.join(nearest)} ({more}{shapes_command(generation)})"


def resolve_accelerator(name: str) -> TpuShape:
    """An XPK accelerator name ('v5litepod-16', 'v5p-4x4x4', 'v6e-4', 'v4-8', 'tpu7x-128') or a
    catalog '-<N>t' name ('v5litepod-8-8t')."""
    wanted = str(name).strip().lower()
    shape = _INDEX.names.get(wanted)
    if shape is None:
        shown = name if len(name) <= 60 else f"{name[:40]}...({len(name)} characters)"
        raise CatalogError(f"'{shown}' is not a known TPU accelerator{_name_hint(wanted)}")
    return shape


def _name_prefix(head: str) -> str | None:
    """The accelerator-name prefix a user meant: 'v4', 'v5litepod' (also typed 'v5e' or, as a
    typo, 'v5litpod') ..."""
    aliases = {g.value: gen.name_prefix for g, gen in GENERATIONS.items()}
    aliases.update({gen.name_prefix: gen.name_prefix for gen in GENERATIONS.values()})
    if head in aliases:
        return aliases[head]
    close = difflib.get_close_matches(head, list(aliases), n=1)
    return aliases[close[0]] if close else None


def _name_hint(wanted: str) -> str:
    """A suggestion from the generation the user typed only: 'v4-17' never suggests 'v6e-16'."""
    head, _, rest = wanted.partition("-")
    prefix = _name_prefix(head)
    if prefix is None or not rest:
        prefixes = ", ".join(gen.name_prefix for gen in GENERATIONS.values())
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
