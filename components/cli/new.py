"""`python -m components new STACK --team T --tpu ACCELERATOR --capacity C --region R`: write
``stacks/Pulumi.<STACK>.yaml`` for a team's first TPU pool, checked as `plan` checks it before it
is written (nothing is written when it would not plan), never over an existing file.

The zone, unless given, is the first zone of the region that offers the TPU generation with that
capacity type (the zone catalog, ``components.tpu.zones``).
"""

from __future__ import annotations

import argparse

from components.cli import path_argument, usage_error
from components.errors import ConfigError
from components.tpu import catalog
from components.tpu.zones import zone_table

CAPACITY = {"on-demand": "onDemand", "spot": "spot", "flex-start": "flexStart"}
"""``--capacity`` values and the stack file's keys (a reservation: ``--reservation NAME``)."""


def add_arguments(new: argparse.ArgumentParser) -> None:
    """The `new` command's arguments (its parser is made by ``components.cli.main``)."""
    new.add_argument("stack", help="the stack's name: writes stacks/Pulumi.<stack>.yaml")
    new.add_argument("--team", required=True, help="your team: its namespace and cost label")
    new.add_argument(
        "--tpu",
        required=True,
        metavar="ACCELERATOR",
        help="the TPU slice, e.g. v6e-16, v5litepod-8, v5p-16 (`shapes` lists them)",
    )
    new.add_argument(
        "--capacity",
        choices=[*CAPACITY, "reservation"],
        default="on-demand",
        help="how the TPU VMs are obtained (reservation: with --reservation NAME)",
    )
    new.add_argument("--reservation", metavar="NAME", help="the reservation to consume")
    new.add_argument("--region", required=True, help="GCP region, e.g. us-east5")
    new.add_argument(
        "--zone", help="GCP zone (default: the region's first zone with that TPU and capacity)"
    )
    new.add_argument("--project", help="GCP project (default: tpu-pathways-<stack>)")
    new.add_argument("--slices", type=int, default=1, help="slices of the pool (default 1)")
    new.add_argument(
        "--environment", choices=["dev", "staging", "production"], default="dev", help="default dev"
    )
    new.add_argument("--stacks-dir", type=path_argument, default=None, help=argparse.SUPPRESS)
    new.set_defaults(handler=run)


def _error(key: str, message: str) -> ConfigError:
    return usage_error("new", key, message)


def run(args: argparse.Namespace) -> int:
    from components.cli.diff import stacks_dir
    from components.plan.stack_source import read_stack
    from components.resolve.stack_files import check_stack_name, stack_path

    check_stack_name(args.stack)
    directory = stacks_dir(args)
    path = stack_path(args.stack, directory)
    if path.exists():
        raise _error("stack", f"{str(path)!r} exists; choose another stack name (nothing written)")
    text = stack_text(args)
    path.write_text(text, encoding="utf-8")
    try:  # checked as `plan` checks it: the file stays only if it would plan
        read_stack(args.stack, directory)
    except ConfigError:
        path.unlink()
        raise
    print(f"wrote {path}\nnext: python -m components plan --stack {args.stack}")
    return 0


def stack_text(args: argparse.Namespace) -> str:
    """The stack file's text, from the arguments (the usage errors raised here name the flag)."""
    try:
        shape = catalog.resolve_accelerator(args.tpu)
    except catalog.CatalogError as exc:
        raise _error("--tpu", str(exc)) from None
    capacity = _capacity_lines(args)
    zone = args.zone or _zone(shape.generation, args.region, _capacity_key(args))
    project = args.project or f"tpu-pathways-{args.stack}"
    lines = [
        f"# Stack '{args.stack}': team {args.team}'s {shape.accelerator_name} "
        f"({shape.topology}, {shape.chips} chips) TPU pool, {args.capacity} capacity.",
        "# Written by `python -m components new`; every key: docs/config-reference.md.",
        f"# Check it offline: python -m components plan --stack {args.stack}",
        "config:",
        f"  tpu-pathways:environment: {args.environment}",
        f"  tpu-pathways:team: {args.team}",
        "  tpu-pathways:gcp:",
        f"    project: {project}  # your GCP project",
        f"    region: {args.region}",
        f"    zone: {zone}",
        "  tpu-pathways:cluster:",
        f"    name: pathways-{args.stack}",
        "  tpu-pathways:tpuPools:",
        f"    - name: {shape.generation.value}",
        f"      accelerator: {shape.accelerator_name}",
        f"      slices: {args.slices}",
        *capacity,
        "  tpu-pathways:teams:",
        f"    - name: {args.team}",
    ]
    return "\n".join(lines) + "\n"


def _capacity_key(args: argparse.Namespace) -> str:
    return "reservation" if args.capacity == "reservation" else CAPACITY[args.capacity]


def _capacity_lines(args: argparse.Namespace) -> list[str]:
    if args.capacity == "reservation":
        if not args.reservation:
            raise _error("--reservation", "required with --capacity reservation: its name")
        return ["      capacity:", f"        reservation: {args.reservation}"]
    if args.reservation:
        raise _error("--reservation", "only with --capacity reservation")
    return ["      capacity:", f"        {CAPACITY[args.capacity]}: true"]


def _zone(generation: catalog.TpuGeneration, region: str, capacity: str) -> str:
    """The region's first zone offering ``generation``, one listing ``capacity`` first."""
    table = zone_table()
    zones = [z for z in table.zones_of(generation) if z.startswith(f"{region}-")]
    with_capacity = [z for z in zones if capacity in (table.capacity_in(generation, z) or ())]
    if with_capacity or zones:
        return (with_capacity or zones)[0]
    offered = ", ".join(table.zones_of(generation)) or "none listed"
    raise _error(
        "--region",
        f"{region!r} has no zone with {generation.value} in the zone catalog (zones that have "
        f"it: {offered}); pick one of their regions, or give --zone for a zone newer than the "
        "catalog",
    )
