"""TPU catalog: agreement with XPK 1.16 (fixture), known answers, errors, Pathways support."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from components.tpu.catalog import (
    CatalogError,
    TpuGeneration,
    TpuShape,
    accepted_names,
    all_shapes,
    is_tpu_machine_type,
    machine_types,
    resolve_accelerator,
    shape_for,
    topologies,
)

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "xpk_1_16_tpu_shapes.json"
XPK = json.loads(FIXTURE.read_text())
XPK_NAMES: dict[str, dict] = XPK["names"]


# --- agreement with XPK 1.16 ---------------------------------------------------------------


def test_fixture_is_xpk_1_16_and_complete():
    assert XPK["xpk_version"] == "1.16.0"
    assert len(XPK_NAMES) == 2020
    per_label: dict[str, int] = {}
    for want in XPK_NAMES.values():
        per_label[want["gke_accelerator"]] = per_label.get(want["gke_accelerator"], 0) + 1
    assert per_label == {
        "tpu-v4-podslice": 868,
        "tpu7x": 564,
        "tpu-v5p-slice": 541,
        "tpu7": 19,
        "tpu-v6e-slice": 16,
        "tpu-v5-lite-podslice": 12,
    }


def test_every_xpk_name_resolves_like_xpk():
    failures = []
    for name, want in XPK_NAMES.items():
        try:
            shape = resolve_accelerator(name)
        except CatalogError as exc:
            failures.append(f"{name}: {exc}")
            continue
        got = {
            "topology": shape.topology,
            "machine_type": shape.machine_type,
            "gke_accelerator": shape.accelerator_label,
            "vms_per_slice": shape.hosts,
            "chips_per_vm": shape.chips_per_host,
            # XPK's device_type is '<prefix>-<tensorcores>': our count of cores, XPK's prefix
            "device_type": f"{want['device_type'].rpartition('-')[0]}-{shape.tensorcores}",
            "pathways_tpu_version": shape.pathways_instance_type.split(":")[0],
            "requires_workload_policy": shape.needs_workload_policy,
        }
        if got != want:
            failures.append(f"{name}: got {got}, XPK has {want}")
    assert not failures, "\n".join(failures)


def accelerator_names() -> list[str]:
    """Every name resolve_accelerator() accepts: each shape's names, shapes in catalog order."""
    return [name for shape in all_shapes() for name in accepted_names(shape)]


def test_names_without_machine_suffix_are_exactly_xpks():
    ours = {name for name in accelerator_names() if not name.endswith("t")}
    assert ours == set(XPK_NAMES)


def test_default_shapes_are_exactly_xpks():
    xpk = {(v["gke_accelerator"], v["topology"], v["machine_type"]) for v in XPK_NAMES.values()}
    ours = {
        (s.accelerator_label, s.topology, s.machine_type) for s in all_shapes() if s.is_xpk_default
    }
    assert ours == xpk


# --- known answers (written by hand) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "topology", "machine_type", "chips", "hosts", "instance_type"),
    [
        ("v5litepod-16", "4x4", "ct5lp-hightpu-4t", 16, 4, "tpuv5e:4x4"),
        ("v5litepod-4x4", "4x4", "ct5lp-hightpu-4t", 16, 4, "tpuv5e:4x4"),
        ("v5litepod-8", "2x4", "ct5lp-hightpu-4t", 8, 2, "tpuv5e:2x4"),
        ("v5litepod-256", "16x16", "ct5lp-hightpu-4t", 256, 64, "tpuv5e:16x16"),
        ("v5p-8", "2x2x1", "ct5p-hightpu-4t", 4, 1, "tpuv5:2x2x1"),
        ("v5p-16", "2x2x2", "ct5p-hightpu-4t", 8, 2, "tpuv5:2x2x2"),
        ("v5p-128", "4x4x4", "ct5p-hightpu-4t", 64, 16, "tpuv5:4x4x4"),
        ("v5p-4x4x4", "4x4x4", "ct5p-hightpu-4t", 64, 16, "tpuv5:4x4x4"),
        ("v5p-1024", "8x8x8", "ct5p-hightpu-4t", 512, 128, "tpuv5:8x8x8"),
        ("v5p-4x8x16", "4x8x16", "ct5p-hightpu-4t", 512, 128, "tpuv5:4x8x16"),
        ("v6e-1", "1x1", "ct6e-standard-1t", 1, 1, "tpuv6e:1x1"),
        ("v6e-4", "2x2", "ct6e-standard-4t", 4, 1, "tpuv6e:2x2"),
        ("v6e-2x2", "2x2", "ct6e-standard-4t", 4, 1, "tpuv6e:2x2"),
        ("v6e-8", "2x4", "ct6e-standard-4t", 8, 2, "tpuv6e:2x4"),
        ("v6e-256", "16x16", "ct6e-standard-4t", 256, 64, "tpuv6e:16x16"),
        ("v5litepod-8-8t", "2x4", "ct5lp-hightpu-8t", 8, 1, "tpuv5e1t:2x4"),
        ("v6e-8-8t", "2x4", "ct6e-standard-8t", 8, 1, "tpuv6e1t:2x4"),
        ("v5litepod-1-1t", "1x1", "ct5lp-hightpu-1t", 1, 1, "tpuv5e:1x1"),
        ("v5litepod-4-4t", "2x2", "ct5lp-hightpu-4t", 4, 1, "tpuv5e:2x2"),
    ],
)
def test_known_shapes(name, topology, machine_type, chips, hosts, instance_type):
    shape = resolve_accelerator(name)
    assert (shape.topology, shape.machine_type) == (topology, machine_type)
    assert (shape.chips, shape.hosts, shape.multi_host) == (chips, hosts, hosts > 1)
    assert shape.pathways_instance_type == instance_type


def test_v5litepod_16_in_full():
    shape = resolve_accelerator("v5litepod-16")
    assert shape == TpuShape(TpuGeneration.V5E, "4x4", "ct5lp-hightpu-4t", 4)
    assert shape.accelerator_label == "tpu-v5-lite-podslice"
    assert shape.accelerator_name == "v5litepod-16"
    assert shape.tensorcores_per_chip == 1
    assert shape.multi_host
    assert shape.pathways_supported


def test_v5p_counts_tensorcores_not_chips():
    shape = shape_for("v5p", "2x2x1")
    assert (shape.tensorcores_per_chip, shape.tensorcores, shape.chips) == (2, 8, 4)
    assert shape.accelerator_name == "v5p-8"
    assert shape.accelerator_label == "tpu-v5p-slice"
    assert not shape.multi_host


def test_v6e_labels():
    shape = shape_for(TpuGeneration.V6E, "2x2")
    assert shape.accelerator_label == "tpu-v6e-slice"
    assert shape.accelerator_name == "v6e-4"
    assert not shape.multi_host


def test_v5p_generated_count_and_extremes():
    v5p = [s for s in all_shapes() if s.generation is TpuGeneration.V5P]
    assert len(v5p) == 414
    assert len(topologies("v5p")) == 414
    assert max(s.chips for s in v5p) == 8960
    assert topologies("v5p")[:6] == ["2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8"]
    valid = set(topologies("v5p"))
    assert {"4x4x256", "4x8x256", "4x4x140", "20x20x20"} <= valid  # 64, 128, 35, 125 cubes
    assert not {"4x12x256", "8x8x144", "24x24x24", "4x4x6", "8x4x4"} & valid


def test_shape_counts_per_generation():
    counts = {g: sum(s.generation is g for s in all_shapes()) for g in TpuGeneration}
    assert counts == {
        TpuGeneration.V4: 800,
        TpuGeneration.V5E: 9,
        TpuGeneration.V5P: 414,
        TpuGeneration.V6E: 9,
        TpuGeneration.TPU7X: 433,
        TpuGeneration.TPU7: 10,
    }


# --- v4, tpu7x (Ironwood), tpu7: known answers --------------------------------------------


@pytest.mark.parametrize(
    ("name", "topology", "machine_type", "label", "chips", "hosts", "cores", "instance_type"),
    [
        ("v4-8", "2x2x1", "ct4p-hightpu-4t", "tpu-v4-podslice", 4, 1, 8, "tpuv4:2x2x1"),
        ("v4-16", "2x2x2", "ct4p-hightpu-4t", "tpu-v4-podslice", 8, 2, 16, "tpuv4:2x2x2"),
        ("v4-128", "4x4x4", "ct4p-hightpu-4t", "tpu-v4-podslice", 64, 16, 128, "tpuv4:4x4x4"),
        ("v4-4x8x4", "4x8x4", "ct4p-hightpu-4t", "tpu-v4-podslice", 128, 32, 256, "tpuv4:4x8x4"),
        ("v4-256", "4x4x8", "ct4p-hightpu-4t", "tpu-v4-podslice", 128, 32, 256, "tpuv4:4x4x8"),
        ("v4-4096", "8x16x16", "ct4p-hightpu-4t", "tpu-v4-podslice", 2048, 512, 4096,
         "tpuv4:8x16x16"),
        ("tpu7x-2", "1x1x1", "tpu7x-standard-1t", "tpu7x", 1, 1, 2, "tpu7x:1x1x1"),
        ("tpu7x-8", "2x2x1", "tpu7x-standard-4t", "tpu7x", 4, 1, 8, "tpu7x:2x2x1"),
        ("tpu7x-128", "4x4x4", "tpu7x-standard-4t", "tpu7x", 64, 16, 128, "tpu7x:4x4x4"),
        ("tpu7x-16384", "16x16x32", "tpu7x-standard-4t", "tpu7x", 8192, 2048, 16384,
         "tpu7x:16x16x32"),
        ("tpu7-2", "1x1x1", "tpu7-standard-1t", "tpu7", 1, 1, 2, "tpu7:1x1x1"),
        ("tpu7-512", "4x8x8", "tpu7-standard-4t", "tpu7", 256, 64, 512, "tpu7:4x8x8"),
        ("tpu7-4x4x16", "4x4x16", "tpu7-standard-4t", "tpu7", 256, 64, 512, "tpu7:4x4x16"),
    ],
)  # fmt: skip
def test_new_generations_known_shapes(
    name, topology, machine_type, label, chips, hosts, cores, instance_type
):
    shape = resolve_accelerator(name)
    assert (shape.topology, shape.machine_type, shape.accelerator_label) == (
        topology,
        machine_type,
        label,
    )
    assert (shape.chips, shape.hosts, shape.tensorcores) == (chips, hosts, cores)
    assert shape.tensorcores_per_chip == 2
    assert shape.pathways_instance_type == instance_type


def test_v4_lists_every_order_of_dimensions():
    v4 = set(topologies("v4"))
    assert {"4x4x8", "4x8x4", "8x4x4"} <= v4  # three shapes; XPK enforces no order for v4
    assert "4x4x256" in v4 and "4x8x256" not in v4  # 64 cubes at most
    assert max(s.chips for s in all_shapes() if s.generation == "v4") == 4096


def test_tpu7x_and_tpu7_extremes():
    tpu7x = [s for s in all_shapes() if s.generation == "tpu7x"]
    assert max(s.chips for s in tpu7x) == 9216  # 144 cubes: the Ironwood pod
    assert topologies("tpu7") == [
        "1x1x1", "2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x4x12", "4x4x16", "4x8x8",
    ]  # fmt: skip
    assert machine_types("tpu7x") == ["tpu7x-standard-1t", "tpu7x-standard-4t"]


def test_v5e_2x4_is_two_hosts_unless_8t_is_named():
    assert shape_for("v5e", "2x4").hosts == 2
    assert shape_for("v5e", "2x4", "ct5lp-hightpu-4t").hosts == 2
    single = shape_for("v5e", "2x4", "ct5lp-hightpu-8t")
    assert (single.hosts, single.chips_per_host, single.multi_host) == (1, 8, False)
    assert single.accelerator_name == "v5litepod-8-8t"
    assert not single.is_xpk_default


def test_v6e_8t():
    shape = shape_for("v6e", "2x4", "ct6e-standard-8t")
    assert (shape.hosts, shape.chips_per_host) == (1, 8)
    assert shape.pathways_instance_type == "tpuv6e1t:2x4"
    assert topologies("v6e", "ct6e-standard-8t") == ["2x4"]


def test_one_by_one_shapes():
    v6e = shape_for("v6e", "1x1")
    assert (v6e.machine_type, v6e.chips, v6e.hosts, v6e.chips_per_host) == (
        "ct6e-standard-1t",
        1,
        1,
        1,
    )
    v5e = shape_for("v5e", "1x1", "ct5lp-hightpu-1t")
    assert (v5e.chips, v5e.hosts, v5e.chips_per_host) == (1, 1, 1)


def test_topologies_and_machine_types():
    assert topologies("v5e") == ["2x4", "4x4", "4x8", "8x8", "8x16", "16x16"]
    assert topologies("v5e", "ct5lp-hightpu-4t") == [
        "2x2",
        "2x4",
        "4x4",
        "4x8",
        "8x8",
        "8x16",
        "16x16",
    ]
    assert topologies("v6e") == ["1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"]
    assert machine_types("v5e") == ["ct5lp-hightpu-1t", "ct5lp-hightpu-4t", "ct5lp-hightpu-8t"]
    assert machine_types("v5p") == ["ct5p-hightpu-4t"]
    assert machine_types("v6e") == ["ct6e-standard-1t", "ct6e-standard-4t", "ct6e-standard-8t"]


def test_v5p_topologies_sorted_by_chips_then_dimensions():
    # all 1536-chip v5p slices (v5p-3072 is not one of them: it is 8x12x16)
    chips_1536 = [t for t in topologies("v5p") if shape_for("v5p", t).chips == 1536]
    assert chips_1536 == ["4x4x96", "4x8x48", "4x12x32", "4x16x24", "8x8x24", "8x12x16"]
    assert resolve_accelerator("v5p-3072").topology == "8x12x16"


def test_every_shape_round_trips_through_its_name():
    assert len(accelerator_names()) == len(set(accelerator_names()))
    for shape in all_shapes():
        assert resolve_accelerator(shape.accelerator_name) == shape
        assert shape_for(shape.generation, shape.topology, shape.machine_type) == shape
        assert shape.hosts * shape.chips_per_host == shape.chips


def test_orderings_are_deterministic():
    assert [s.accelerator_name for s in all_shapes()[:3]] == ["v4-8", "v4-16", "v4-32"]
    assert accelerator_names()[:2] == ["v4-8", "v4-2x2x1"]


def test_inputs_are_normalised():
    assert resolve_accelerator(" V5LitePod-16 ") == shape_for("V5E", " 4X4 ")


# --- errors ----------------------------------------------------------------------------------


def _message(call, *args) -> str:
    with pytest.raises(CatalogError) as info:
        call(*args)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)
    return str(info.value)


def test_bad_topology_message():
    assert _message(shape_for, "v5e", "4x5") == (
        "'4x5' is not a v5e topology; valid: 2x4, 4x4, 4x8, 8x8, 8x16, 16x16 "
        "(python -m components shapes v5e)"
    )


def test_explicit_only_topology_names_the_machine_type():
    assert _message(shape_for, "v5e", "2x2") == (
        "'2x2' is not a v5e topology; valid: 2x4, 4x4, 4x8, 8x8, 8x16, 16x16 "
        "(python -m components shapes v5e); 2x2 needs machine type ct5lp-hightpu-4t"
    )
    assert _message(shape_for, "v5e", "1x1").endswith("; 1x1 needs machine type ct5lp-hightpu-1t")


def test_v5p_topology_message_is_short_and_hints_the_order():
    message = _message(shape_for, "v5p", "4x8x4")
    assert message == (
        "'4x8x4' is not a v5p topology; valid: 2x2x1, 2x2x2, 2x2x4, 2x4x4, 4x4x4, 4x4x8, "
        "4x4x12, 4x4x16, ... (414 in all: python -m components shapes v5p); did you mean '4x4x8'?"
    )
    assert len(_message(shape_for, "v5p", "5x5x5")) < 150


def test_topology_not_offered_by_machine_type():
    assert _message(shape_for, "v5e", "4x4", "ct5lp-hightpu-8t") == (
        "'4x4' is not a v5e topology for ct5lp-hightpu-8t; valid: 2x4 "
        "(python -m components shapes v5e)"
    )


def test_bad_machine_type_message():
    assert _message(shape_for, "v5e", "4x4", "ct6e-standard-4t") == (
        "'ct6e-standard-4t' is not a v5e machine type; "
        "valid: ct5lp-hightpu-1t, ct5lp-hightpu-4t, ct5lp-hightpu-8t"
    )
    assert _message(topologies, "v6e", "ct6e-standard-2t").startswith(
        "'ct6e-standard-2t' is not a v6e machine type; valid: ct6e-standard-1t"
    )


def test_bad_generation_message():
    expected = "'v3' is not a supported TPU generation; valid: v4, v5e, v5p, v6e, tpu7x, tpu7"
    assert _message(shape_for, "v3", "2x2x1") == expected
    assert _message(machine_types, "v3") == expected
    assert _message(topologies, "v3") == expected


def test_bad_name_messages():
    assert _message(resolve_accelerator, "v5litepod-17") == (
        "'v5litepod-17' is not a known TPU accelerator; did you mean 'v5litepod-16'?"
    )
    assert _message(resolve_accelerator, "tpu") == (
        "'tpu' is not a known TPU accelerator; expected <prefix>-<tensorcores> or "
        "<prefix>-<topology> with prefix one of v4, v5litepod, v5p, v6e, tpu7x, tpu7, "
        "e.g. v5litepod-16, v5p-4x4x4, v6e-4, tpu7x-128"
    )
    # XPK has no name for the single-host v5e slices: point at the machine-qualified name
    assert _message(resolve_accelerator, "v5litepod-4") == (
        "'v5litepod-4' is not a known TPU accelerator; did you mean 'v5litepod-4-4t'?"
    )
    assert _message(resolve_accelerator, "v5litepod-1").endswith("did you mean 'v5litepod-1-1t'?")


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [
        ("v4-17", "v4-16"),  # not v6e-16: suggestions stay in the generation typed
        ("v4-12", "v4-8"),  # equally near 8 and 16: the smaller
        ("v6e-17", "v6e-16"),
        ("tpu7-1024", "tpu7-512"),  # not tpu7x-1024
        ("tpu7x-3", "tpu7x-2"),  # not tpu7-...
        ("v5e-16", "v5litepod-16"),  # the generation's name, spelled XPK's way
        ("v5p-4x8x4", "v5p-4x4x8"),  # XPK spells v5p topologies in non-decreasing order
        ("v6e-4x2", "v6e-2x4"),
    ],
)
def test_suggestions_stay_within_the_generation(typed, suggested):
    assert _message(resolve_accelerator, typed) == (
        f"'{typed}' is not a known TPU accelerator; did you mean '{suggested}'?"
    )


# --- PathwaysJob controller v0.1.4 -----------------------------------------------------------


@pytest.mark.parametrize(
    ("generation", "topology", "machine_type", "supported"),
    [
        ("v5e", "4x4", None, True),
        ("v5e", "2x2", "ct5lp-hightpu-4t", True),  # the controller lists 2x2, XPK does not
        ("v5e", "2x4", "ct5lp-hightpu-8t", True),
        ("v5e", "1x1", "ct5lp-hightpu-1t", False),  # 1t is not in its worker type enum
        ("v6e", "1x1", None, False),  # ct6e-standard-1t, likewise
        ("v6e", "2x2", None, True),
        ("v6e", "16x16", None, True),
        ("v6e", "2x4", "ct6e-standard-8t", True),
        ("v5p", "2x2x1", None, True),
        ("v5p", "16x20x28", None, True),
        ("v5p", "4x4x16", None, False),  # v5p-512 is 4x8x8 for the controller
        ("v5p", "4x8x16", None, False),
        ("v4", "2x2x1", None, True),  # ct4p-hightpu-4t: all three upstream samples use it
        ("v4", "4x4x16", None, True),  # in the controller's list though not an XPK default
        ("v4", "4x16x16", None, True),
        ("v4", "16x4x4", None, False),
        ("v4", "4x4x12", None, False),
        ("tpu7x", "2x2x1", None, True),
        ("tpu7x", "16x24x24", None, True),
        ("tpu7x", "4x4x16", None, False),  # tpu7x-512 is 4x8x8
        ("tpu7x", "1x1x1", None, False),  # tpu7x-standard-1t is not in the CRD enum
        ("tpu7", "2x2x1", None, False),  # no tpu7 machine type in the CRD enum
    ],
)
def test_pathways_supported(generation, topology, machine_type, supported):
    assert shape_for(generation, topology, machine_type).pathways_supported is supported


def test_pathways_accepts_96_v5p_shapes_one_per_core_count():
    accepted = [s for s in all_shapes() if s.generation == "v5p" and s.pathways_supported]
    assert len(accepted) == 96
    assert len({s.chips for s in accepted}) == 96
    assert all(s.accelerator_name == f"v5p-{s.tensorcores}" for s in accepted)


def test_pathways_accepts_13_v4_and_98_tpu7x_shapes():
    accepted = {g: 0 for g in TpuGeneration}
    for shape in all_shapes():
        accepted[shape.generation] += shape.pathways_supported
    assert accepted == {
        TpuGeneration.V4: 13,
        TpuGeneration.V5E: 8,
        TpuGeneration.V5P: 96,
        TpuGeneration.V6E: 8,
        TpuGeneration.TPU7X: 98,
        TpuGeneration.TPU7: 0,
    }


# --- pathwaysutils (shared-service client) -------------------------------------------------


@pytest.mark.parametrize(
    ("generation", "topology", "machine_type", "supported"),
    [
        ("v5e", "4x4", None, True),  # tpuv5e:4x4
        ("v5e", "2x4", "ct5lp-hightpu-8t", False),  # tpuv5e1t: its pattern has no '1t'
        ("v5p", "2x2x1", None, True),  # tpuv5:2x2x1
        ("v6e", "2x2", None, True),
        ("v6e", "2x4", "ct6e-standard-8t", False),
        ("tpu7x", "4x4x4", None, True),
        ("v4", "2x2x1", None, False),  # tpuv4 is not in its pattern
        ("tpu7", "2x2x1", None, False),
    ],
)
def test_pathwaysutils_supported(generation, topology, machine_type, supported):
    assert shape_for(generation, topology, machine_type).pathwaysutils_supported is supported


# --- one classifier for TPU machine types ---------------------------------------------------


@pytest.mark.parametrize(
    ("name", "is_tpu"),
    [
        ("ct4p-hightpu-4t", True),
        ("ct5lp-hightpu-8t", True),
        ("ct5p-hightpu-4t", True),
        ("ct6e-standard-1t", True),
        ("tpu7x-standard-4t", True),
        ("tpu7-standard-1t", True),
        ("ct5p-hightpu-2t", True),  # GKE has it; the catalog does not: still a TPU machine
        ("n2-standard-64", False),
        ("c3-standard-8", False),
        ("e2-standard-16", False),
        (None, False),
    ],
)
def test_is_tpu_machine_type(name, is_tpu):
    assert is_tpu_machine_type(name) is is_tpu


def test_accepted_names_canonical_first():
    assert accepted_names(shape_for("v5p", "2x2x1")) == ["v5p-8", "v5p-2x2x1"]
    assert accepted_names(shape_for("v5e", "2x4", "ct5lp-hightpu-8t")) == [
        "v5litepod-8-8t",
        "v5litepod-2x4-8t",
    ]
    assert accepted_names(shape_for("v4", "4x8x4")) == ["v4-4x8x4"]
    assert accepted_names(shape_for("tpu7x", "1x1x1")) == ["tpu7x-2", "tpu7x-1x1x1"]
