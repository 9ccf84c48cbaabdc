"""The package's TypedDicts and the config models they are validated by cannot drift apart:
every key a TypedDict declares (camelCased, as the schema shows it) is a key of its model,
and ``wire.stack_values`` turns provider values back into the stack file's form."""

import pytest
from pydantic import BaseModel

from components.config.schema import StackConfig
from components.config.schema.addons import AddonsConfig, JobSetAddon, KueueAddon, PathwaysJobAddon
from components.config.schema.cluster import (
    AuthorizedNetwork,
    ClusterConfig,
    GcpConfig,
    NetworkConfig,
)
from components.config.schema.pools import (
    CapacityConfig,
    CpuPoolConfig,
    SystemPoolConfig,
    TpuPoolConfig,
)
from components.config.schema.teams import TeamConfig, TeamResourceQuotaConfig
from components.tpu.generations import TpuGeneration
from tpu_pathways_provider import types
from tpu_pathways_provider.cluster import ClusterArgs
from tpu_pathways_provider.wire import stack_values

MIRRORS: list[tuple[type, type[BaseModel]]] = [
    (types.Gcp, GcpConfig),
    (types.Capacity, CapacityConfig),
    (types.TpuPool, TpuPoolConfig),
    (types.AuthorizedCidr, AuthorizedNetwork),
    (types.Network, NetworkConfig),
    (types.ClusterSettings, ClusterConfig),
    (types.CpuPool, CpuPoolConfig),
    (types.CpuPool, SystemPoolConfig),
    (types.Addon, JobSetAddon),
    (types.Addon, PathwaysJobAddon),
    (types.Kueue, KueueAddon),
    (types.Addons, AddonsConfig),
    (types.ResourceQuota, TeamResourceQuotaConfig),
    (types.Team, TeamConfig),
    (ClusterArgs, StackConfig),
]


def aliases(model: type[BaseModel]) -> set[str]:
    return {field.alias or name for name, field in model.model_fields.items()}


@pytest.mark.parametrize(("typed", "model"), MIRRORS, ids=lambda x: x.__name__)
def test_every_key_of_the_typed_dict_is_a_key_of_its_model(typed, model):
    keys = set(stack_values(typed, dict.fromkeys(typed.__annotations__, "x")))
    assert keys - aliases(model) == set()


def test_every_type_of_the_package_is_mirrored():
    mirrored = {typed.__name__ for typed, _ in MIRRORS}
    declared = {
        name
        for name, value in vars(types).items()
        if isinstance(value, type) and value.__module__ == types.__name__
    }
    assert declared <= mirrored


def test_stack_values_are_the_stack_file_form():
    provider_form = {
        "gcp": {"project": "p", "region": "us-east5", "zone": "us-east5-a"},
        "cluster": {"name": "c", "release_channel": None},
        "tpu_pools": [
            {"name": "v5p", "generation": TpuGeneration.V5P, "topology": "2x2x2", "slices": 2.0}
        ],
        "cpu_pool": {"max_nodes": 3.0, "disk_size_gb": 200.0},
        "not_a_key": 1,
    }
    assert stack_values(ClusterArgs, provider_form) == {
        "gcp": {"project": "p", "region": "us-east5", "zone": "us-east5-a"},
        "cluster": {"name": "c"},
        "tpuPools": [{"name": "v5p", "generation": "v5p", "topology": "2x2x2", "slices": 2}],
        "cpuPool": {"maxNodes": 3, "diskSizeGb": 200},
    }
    assert type(stack_values(ClusterArgs, provider_form)["tpuPools"][0]["slices"]) is int


def test_a_fractional_number_stays_a_float_for_the_model_to_refuse():
    values = stack_values(types.TpuPool, {"name": "p", "slices": 1.5})
    assert values == {"name": "p", "slices": 1.5}
