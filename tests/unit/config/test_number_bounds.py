"""Every whole number a stack file may set has an upper bound that fits the Kubernetes and GCP
fields it reaches (int32 is the smaller of the two integer types Kubernetes uses), so no count
or quota can overflow one (``borrowingLimit: 9223372036854775808`` once reached a ClusterQueue
as written)."""

from __future__ import annotations

import types
import typing

import annotated_types
import pytest
from pydantic import BaseModel

from components.config.schema import StackConfig
from components.config.schema.fleet import FleetStackConfig
from components.errors import ConfigError
from components.resolve.checks import parse_stack_config
from tests.helpers import deep_merge

INT32_MAX = 2**31 - 1  # Kubernetes' int32 fields (e.g. a JobSet's maxRestarts)


def _integer_fields(model: type[BaseModel], path: str, seen: set) -> typing.Iterator:
    if model in seen:
        return
    seen.add(model)
    for name, field in model.model_fields.items():
        yield from _integers(
            field.annotation, list(field.metadata), f"{path}.{field.alias or name}", seen
        )


def _integers(annotation, metadata: list, path: str, seen: set) -> typing.Iterator:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        inner, *more = typing.get_args(annotation)
        more = [m for extra in more for m in [extra, *getattr(extra, "metadata", [])]]
        yield from _integers(inner, metadata + more, path, seen)
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield from _integer_fields(annotation, path, seen)
    elif origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            yield from _integers(arg, metadata, path, seen)
    elif origin is not None:  # list[...], dict[str, ...]
        for arg in typing.get_args(annotation):
            yield from _integers(arg, [], f"{path}[]", seen)
    elif annotation is int:
        yield path, metadata


FIELDS = [
    *_integer_fields(StackConfig, "", set()),
    *_integer_fields(FleetStackConfig, "fleet", set()),
]


def test_the_walk_finds_the_integer_fields():
    paths = {path for path, _ in FIELDS}
    assert {".cpuPool.maxNodes", ".addons.kueue.teamQuotas[].borrowingLimit"} <= paths
    assert ".addons.kueue.teamQuotas[].chips[]" in paths


@pytest.mark.parametrize(("path", "metadata"), FIELDS, ids=[p for p, _ in FIELDS])
def test_every_integer_field_has_an_upper_bound_within_int32(path, metadata):
    bounds = [m.le for m in metadata if isinstance(m, annotated_types.Le)]
    bounds += [m.lt - 1 for m in metadata if isinstance(m, annotated_types.Lt)]
    assert bounds and min(bounds) <= INT32_MAX, (path, metadata)


BASE = {
    "environment": "dev",
    "gcp": {"project": "tpu-pathways-dev", "region": "us-west4", "zone": "us-west4-a"},
    "cluster": {"name": "pathways-dev", "deletionProtection": False},
    "tpuPools": [{"name": "v5e", "generation": "v5e", "topology": "2x4"}],
    "teams": [{"name": "a"}],
}


@pytest.mark.parametrize(
    ("kueue", "key"),
    [
        (
            {"teamQuotas": [{"team": "a", "chips": {"v5litepod-8": 8}, "borrowingLimit": 2**63}]},
            "addons.kueue.teamQuotas[0].borrowingLimit",
        ),
        (
            {"teamQuotas": [{"team": "a", "chips": {"v5litepod-8": 2**63}}]},
            "addons.kueue.teamQuotas[0].chips.v5litepod-8",
        ),
        ({"tpuQuota": 2**63}, "addons.kueue.tpuQuota"),
    ],
)
def test_a_quota_past_int64_is_refused(kueue, key):
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(deep_merge(BASE, {"addons": {"kueue": kueue}}), "test")
    messages = {issue.key: issue.message for issue in caught.value.issues}
    assert messages[key].endswith("must be at most 1000000"), messages


@pytest.mark.parametrize(
    ("resources", "key", "message"),
    [
        ({"cpu": "9223372036854776"}, "cpu", "more millicores than Kubernetes can count (int64)"),
        ({"memory": "8Ei"}, "memory", "more bytes than Kubernetes can count (int64)"),
    ],
)
def test_a_quantity_past_int64_is_refused(resources, key, message):
    workload = {"name": "w", "pool": "v5e", "image": "python:3.12", "command": ["true"]}
    values = deep_merge(BASE, {"workloads": [{**workload, "resources": resources}]})
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(values, "test")
    messages = {issue.key: issue.message for issue in caught.value.issues}
    assert message in messages[f"workloads[0].resources.{key}"], messages
