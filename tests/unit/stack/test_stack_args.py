"""components/stack/args.py: the stack config mapped to the components' Args (literal answers
for the mappings that are more than a copy)."""

from __future__ import annotations

import pytest

from components.addons.kueue import TeamQuotaArgs
from components.gke.maintenance import MaintenanceExclusion, MaintenanceWindow
from components.gke.node_config import PoolTarget
from components.stack import args
from components.tpu.catalog import CatalogError
from components.vocabulary import CapacityType, Environment, ExclusionScope

TARGET = PoolTarget("p", "us-west4", "us-west4-a", "c", "us-west4", "sa@p.iam.gserviceaccount.com")


def test_cluster_args(config_of, stack_values):
    config = config_of(
        stack_values(
            environment="production",
            tpuPools=[{"name": "v6e", "accelerator": "v6e-16", "allowUnlistedZone": True}],
            cluster={
                "authorizedNetworks": [{"cidr": "192.0.2.0/24"}],
                "releaseChannel": "REGULAR",
            },
        )
    )
    cluster = args.gke_cluster_args(config)
    assert (cluster.project, cluster.region, cluster.zone, cluster.name) == (
        "tpu-pathways-dev",
        "us-west4",
        "us-west4-a",
        "pathways-dev",
    )
    # production: private nodes, protection, and no minor or node upgrades until end of support
    assert cluster.private_nodes is True
    assert cluster.protect is True
    assert cluster.maintenance_exclusions == (
        MaintenanceExclusion(
            "no-minor-or-node-upgrades",
            ExclusionScope.NO_MINOR_OR_NODE_UPGRADES,
            "2025-01-01T00:00:00Z",
            None,
        ),
    )
    assert cluster.environment is Environment.PRODUCTION
    assert cluster.team == "ml-platform"
    assert [(n.cidr, n.display_name) for n in cluster.authorized_networks] == [("192.0.2.0/24", "")]


def test_a_dev_cluster(config_of, stack_values):
    cluster = args.gke_cluster_args(config_of(stack_values()))
    assert (cluster.private_nodes, cluster.protect, cluster.maintenance_exclusions) == (
        False,
        False,
        (),
    )
    assert cluster.maintenance_window == MaintenanceWindow(
        "2025-01-04T00:00:00Z", "2025-01-04T08:00:00Z", "FREQ=WEEKLY;BYDAY=SA,SU"
    )


def test_maintenance_as_configured(config_of, stack_values):
    maintenance = {
        "window": {
            "startTime": "2025-02-01T20:00:00Z",
            "endTime": "2025-02-02T02:00:00Z",
            "recurrence": "FREQ=DAILY",
        },
        "exclusions": [
            {
                "name": "freeze",
                "scope": "NO_UPGRADES",
                "startTime": "2025-12-20T00:00:00Z",
                "endTime": "2026-01-05T00:00:00Z",
            }
        ],
    }
    config = config_of(stack_values(environment="staging", cluster={"maintenance": maintenance}))
    cluster = args.gke_cluster_args(config)
    assert cluster.maintenance_window == MaintenanceWindow(
        "2025-02-01T20:00:00Z", "2025-02-02T02:00:00Z", "FREQ=DAILY"
    )
    # given exclusions replace the staging default
    assert cluster.maintenance_exclusions == (
        MaintenanceExclusion(
            "freeze", ExclusionScope.NO_UPGRADES, "2025-12-20T00:00:00Z", "2026-01-05T00:00:00Z"
        ),
    )


def test_an_existing_cluster_by_context_reports_the_stack_name_and_region(config_of, stack_values):
    values = stack_values(
        cluster={"existing": {"kubeconfigContext": "ctx"}},
        scratchBucket={"name": "shared-scratch", "create": False},
    )
    values["cluster"].pop("deletionProtection")
    existing = args.existing_cluster_args(config_of(values))
    assert (existing.name, existing.location, existing.kubeconfig_context) == (
        "pathways-dev",
        "us-west4",
        "ctx",
    )


def test_a_reservation_pool(config_of, stack_values):
    pool = {"name": "r", "accelerator": "v5p-16", "slices": 2, "capacity": {"reservation": "blk"}}
    pool["allowUnlistedZone"] = True  # v5p: not a us-west4 generation
    config = config_of(stack_values(tpuPools=[pool]))
    tpu = args.tpu_pool_args(config.tpu_pools[0], TARGET)
    assert (tpu.name, tpu.slices, tpu.capacity, tpu.reservation) == (
        "r",
        2,
        CapacityType.RESERVATION,
        "blk",
    )
    assert tpu.node_pool_names() == ["r-0", "r-1"]
    assert tpu.shape.machine_type == "ct5p-hightpu-4t"


def test_the_bucket_grants_each_teams_account(config_of, stack_values):
    config = config_of(stack_values(teams=[{"name": "research", "serviceAccount": "trainer"}]))
    bucket = args.scratch_bucket_args(config, (), None)
    assert bucket.bucket_name == "tpu-pathways-dev-pathways-dev-pathways"
    assert [(a.namespace, a.service_account) for a in bucket.workload_accounts] == [
        ("research", "trainer")
    ]
    assert (bucket.team, bucket.retention_days, bucket.protect) == ("ml-platform", 30, False)


def test_an_unknown_accelerator_in_a_team_quota_is_refused():
    with pytest.raises(CatalogError, match="v9-16"):
        TeamQuotaArgs("research", {"v9-16": 8})
