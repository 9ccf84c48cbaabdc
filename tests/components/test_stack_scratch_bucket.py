"""The Pathways scratch bucket and its grants (the node service account, which every Pathways pod
acts as; the teams' Workload Identity principals); and a stack that deploys onto an existing
cluster (no cluster, no pools, still a provider, installs and grants)."""

from __future__ import annotations

import pytest

from tests.cluster_rules import iam_condition_admits

BUCKET = "gcp:storage/bucket:Bucket"
BUCKET_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
NETWORK = "gcp:compute/network:Network"
K8S_PROVIDER = "pulumi:providers:kubernetes"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"

DEV_BUCKET = "tpu-pathways-dev-pathways-dev-pathways"  # <project>-<cluster>-pathways
DEV_NODES = "serviceAccount:pathways-dev-nodes@tpu-pathways-dev.iam.gserviceaccount.com"


def member(team: str, account: str, project: str = "tpu-pathways-dev") -> str:
    # the project number is an invoke the offline plan answers with a placeholder
    return (
        "principal://iam.googleapis.com/projects/<looked up at deploy time>/locations/global/"
        f"workloadIdentityPools/{project}.svc.id.goog/subject/ns/{team}/sa/{account}"
    )


def the_bucket(plan):
    (bucket,) = plan.by_type(BUCKET)
    return bucket


@pytest.fixture(scope="module")
def dev(plan_of, stack_values):
    return plan_of(stack_values())


@pytest.fixture(scope="module")
def deleting(plan_of, stack_values):
    return plan_of(stack_values(scratchBucket={"deleteOnDestroy": True, "retentionDays": 7}))


def test_bucket_settings(dev):
    bucket = the_bucket(dev)
    assert bucket.inputs["name"] == DEV_BUCKET
    assert bucket.inputs["project"] == "tpu-pathways-dev"
    assert bucket.inputs["location"] == "US-WEST4"
    assert bucket.inputs["uniformBucketLevelAccess"] is True
    assert bucket.inputs["publicAccessPrevention"] == "enforced"
    assert bucket.inputs["lifecycleRules"] == [
        {"action": {"type": "Delete"}, "condition": {"age": 30}}
    ]


def test_bucket_is_kept_on_destroy_by_default(dev):
    bucket = the_bucket(dev)
    assert bucket.inputs["forceDestroy"] is False
    assert bucket.options.get("retainOnDelete") is True
    assert not bucket.options.get("protect")


def test_delete_on_destroy_flips_both(deleting):
    bucket = the_bucket(deleting)
    assert bucket.inputs["forceDestroy"] is True
    assert not bucket.options.get("retainOnDelete")


def test_retention_days(deleting):
    assert the_bucket(deleting).inputs["lifecycleRules"] == [
        {"action": {"type": "Delete"}, "condition": {"age": 7}}
    ]


def test_production_protects_the_bucket(example_plan, plan_of, stack_values):
    assert the_bucket(example_plan("serving-v6e")).options.get("protect") is True
    bucket = the_bucket(plan_of(stack_values(environment="production")))
    assert bucket.options.get("protect") is True
    assert bucket.options.get("retainOnDelete") is True


def test_custom_bucket_name(plan_of, stack_values):
    plan = plan_of(stack_values(scratchBucket={"name": "team-scratch-01"}))
    assert the_bucket(plan).inputs["name"] == "team-scratch-01"
    assert plan.outputs["scratch_bucket"] == "gs://team-scratch-01"
    for grant in plan.by_type(BUCKET_MEMBER):
        assert grant.inputs["bucket"] == "team-scratch-01"


def test_scratch_bucket_output(dev):
    assert dev.outputs["scratch_bucket"] == f"gs://{DEV_BUCKET}"


def wi_grants(plan):
    return [g for g in plan.by_type(BUCKET_MEMBER) if g.inputs["member"].startswith("principal:")]


def prefix_condition(bucket: str, team: str, root: str = "") -> dict[str, str]:
    """The IAM condition a team's grants carry, written out as GCS evaluates it: objects are
    named projects/_/buckets/B/objects/NAME; a list request is checked on the bucket and
    carries its prefix as the API attribute storage.googleapis.com/objectListPrefix. A team
    with dedicated pools has its prefix under ``root`` "_/"."""
    return {
        "title": f"team {team} prefix only",
        "description": f"Objects under gs://{bucket}/{root}{team}/ and lists of that prefix",
        "expression": (
            f'resource.name.startsWith("projects/_/buckets/{bucket}/objects/{root}{team}/") || '
            'api.getAttribute("storage.googleapis.com/objectListPrefix", "")'
            f'.startsWith("{root}{team}/")'
        ),
    }


def test_bucket_grants(dev):
    grants = {g.inputs["member"]: g for g in dev.by_type(BUCKET_MEMBER)}
    # The node service account: Pathways pods run on the host network and act as it. The
    # team's KSA through Workload Identity: the team's other pods. Nothing for `default`.
    assert set(grants) == {DEV_NODES, member("pathways", "pathways")}
    for grant in grants.values():
        assert grant.inputs["role"] == "roles/storage.objectUser"
        assert grant.inputs["bucket"] == DEV_BUCKET
    # Workload Identity grants reach the team's prefix only; the node identity is shared by
    # every shared team's host-network pods, so its grant cannot be narrowed to one team: it
    # leaves out _/ only, where the teams with dedicated pools keep their prefixes (none here,
    # but another stack's may use this bucket).
    assert grants[member("pathways", "pathways")].inputs["condition"] == prefix_condition(
        DEV_BUCKET, "pathways"
    )
    nodes = grants[DEV_NODES].inputs["condition"]["expression"]
    objects = f"projects/_/buckets/{DEV_BUCKET}/objects/"
    assert iam_condition_admits(nodes, objects + "pathways/train/0")
    assert not iam_condition_admits(nodes, objects + "_/nlp/train/0")
    assert not iam_condition_admits(nodes, f"projects/_/buckets/{DEV_BUCKET}", "_/")


def test_each_team_reaches_only_its_own_prefix(plan_of, stack_values):
    """Team `a` must not delete team `a-b`'s pathwaysDir: every Workload Identity grant is
    conditioned on the grantee's own prefix, with the slash that keeps `a/` apart from `a-b/`."""
    plan = plan_of(stack_values(teams=[{"name": "a"}, {"name": "a-b"}]))
    conditions = {g.inputs["member"]: g.inputs["condition"] for g in wi_grants(plan)}
    assert conditions == {
        member("a", "pathways"): prefix_condition(DEV_BUCKET, "a"),
        member("a-b", "pathways"): prefix_condition(DEV_BUCKET, "a-b"),
    }
    a = conditions[member("a", "pathways")]["expression"]
    assert "/objects/a/" in a and "a-b" not in a


def test_no_grant_reaches_the_whole_bucket(example_plan):
    checked = 0
    for stack in ("dev", "research-v5p", "serving-v6e", "team-research"):
        for grant in example_plan(stack).by_type(BUCKET_MEMBER):
            if grant.inputs["member"].startswith("principal://"):
                assert "condition" in grant.inputs, (stack, grant.name)
                checked += 1
    # the teams' Workload Identity grants of the four stacks, and the prefix grants of
    # teams[].buckets in dev and research-v5p
    assert checked == 6


def test_region_change_keeps_the_bucket(dev):
    """A new location would replace the bucket under the same global name (the new one cannot
    be created while the old holds the name; the old one's deletion loses the scratch data):
    the location is fixed at creation and a region change leaves the bucket where it is."""
    assert the_bucket(dev).options["ignoreChanges"] == ["location"]


def test_node_service_account_has_no_project_wide_storage_role(dev):
    roles = {r.inputs["role"] for r in dev.by_type("gcp:projects/iAMMember:IAMMember")}
    assert not [role for role in roles if "storage" in role]


def test_workload_identity_grants_wait_for_the_cluster(dev):
    (cluster,) = dev.by_type(CLUSTER)
    grants = wi_grants(dev)
    assert grants
    for grant in grants:
        assert cluster.urn in grant.dependencies


def test_jobs_wait_for_the_bucket_and_every_grant(plan_of, stack_values):
    plan = plan_of(stack_values(workloads=[WORKLOAD]))
    (job,) = plan.by_type(PATHWAYS_JOB)
    (bucket,) = plan.by_type(BUCKET)
    grants = plan.by_type(BUCKET_MEMBER)
    assert len(grants) == 2
    for needed in [bucket, *grants]:
        assert needed.urn in job.dependencies, needed.name


def test_grants_per_team_and_service_account(plan_of, stack_values):
    plan = plan_of(
        stack_values(teams=[{"name": "ml", "serviceAccount": "trainer"}, {"name": "infer"}])
    )
    members = sorted(g.inputs["member"] for g in plan.by_type(BUCKET_MEMBER))
    assert members == sorted([DEV_NODES, member("ml", "trainer"), member("infer", "pathways")])


def test_existing_bucket_gets_grants_but_is_not_created(plan_of, stack_values):
    plan = plan_of(stack_values(scratchBucket={"create": False, "name": "shared-scratch"}))
    assert plan.by_type(BUCKET) == []
    grants = plan.by_type(BUCKET_MEMBER)
    assert len(grants) == 2
    for grant in grants:
        assert grant.inputs["bucket"] == "shared-scratch"
        assert grant.inputs["role"] == "roles/storage.objectUser"
    assert plan.outputs["scratch_bucket"] == "gs://shared-scratch"


def test_existing_bucket_needs_a_name(stack_values, config_error):
    error = config_error(stack_values(scratchBucket={"create": False}))
    assert [i.key for i in error.issues] == ["scratchBucket.name"]
    assert "required when create is false" in error.issues[0].message


# --- onto an existing cluster ---------------------------------------------------------------

EXISTING_BY_NAME = {
    "name": "pathways-dev",
    "existing": {"name": "xpk-cluster", "location": "us-west4"},
}
EXISTING_BY_CONTEXT = {"name": "pathways-dev", "existing": {"kubeconfigContext": "my-gke"}}
WORKLOAD = {"name": "notebook", "pool": "v5e", "mode": "headless"}


@pytest.fixture(scope="module", params=["by-name", "by-context"])
def existing(request, plan_of, stack_values):
    cluster = EXISTING_BY_NAME if request.param == "by-name" else EXISTING_BY_CONTEXT
    # A bucket of this stack's own: the default name is the owning stack's bucket.
    values = stack_values(workloads=[WORKLOAD], scratchBucket={"name": "team-scratch"})
    values["cluster"] = dict(cluster)
    return plan_of(values)


def test_existing_cluster_creates_no_cluster_pools_or_network(existing):
    types = {r.type for r in existing.resources}
    assert CLUSTER not in types
    assert NODE_POOL not in types
    assert NETWORK not in types


def test_existing_cluster_still_gets_provider_installs_and_grants(existing):
    (provider,) = existing.by_type(K8S_PROVIDER)
    files = {r.inputs["file"]: r for r in existing.by_type(CONFIG_FILE)}
    assert set(files) == {
        "https://github.com/kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml",
        "https://github.com/google/pathways-job/releases/download/v0.1.4/install.yaml",
    }
    for install in files.values():
        assert install.provider == provider.urn
    (job,) = existing.by_type(PATHWAYS_JOB)
    assert job.provider == provider.urn
    # the team's KSA only: the owner stack's node service account is not known here
    assert [g.inputs["member"] for g in existing.by_type(BUCKET_MEMBER)] == [
        member("pathways", "pathways")
    ]
    assert len(existing.by_type(BUCKET)) == 1


def test_existing_cluster_by_context_uses_that_context(plan_of, stack_values):
    values = stack_values(scratchBucket={"create": False, "name": "owner-scratch"})
    values["cluster"] = dict(EXISTING_BY_CONTEXT)
    (provider,) = plan_of(values).by_type(K8S_PROVIDER)
    assert provider.inputs["context"] == "my-gke"


def test_existing_cluster_with_the_default_bucket_is_refused(stack_values, config_error):
    values = stack_values()
    values["cluster"] = dict(EXISTING_BY_NAME)
    error = config_error(values)
    assert [i.key for i in error.issues] == ["scratchBucket"]
    assert "would collide with the owning stack's" in error.issues[0].message
    assert "'tpu-pathways-dev-pathways-dev-pathways'" in error.issues[0].message


# --- the teams with dedicated pools: their prefixes under _/ ----------------------------------

RESEARCH_BUCKET = "tpu-pathways-research-pathways-research-pathways"


def test_a_dedicated_teams_grants_are_under_the_dedicated_root(example_plan):
    """nlp (team stack team-research) has pools dedicated to it in research-v5p: the owner
    grants nlp's nodes gs://<bucket>/_/nlp/, the team stack grants nlp's service account the
    same prefix, and nlp's job writes there."""
    owner = {g.name: g for g in example_plan("research-v5p").by_type(BUCKET_MEMBER)}
    nlp_nodes = owner["pathways-research-scratch-nlp-nodes"]
    assert nlp_nodes.inputs["condition"] == prefix_condition(RESEARCH_BUCKET, "nlp", "_/")
    team = example_plan("team-research")
    (grant,) = wi_grants(team)
    assert grant.inputs["member"] == member("nlp", "pathways", "tpu-pathways-research")
    assert grant.inputs["condition"] == prefix_condition(RESEARCH_BUCKET, "nlp", "_/")
    (job,) = team.by_type(PATHWAYS_JOB)
    assert job.inputs["spec"]["pathwaysDir"] == f"gs://{RESEARCH_BUCKET}/_/nlp/nlp-notebook"


DEDICATED_B = {
    "teams": [{"name": "a", "isolation": "shared"}, {"name": "b"}],
    "teamCpuPools": [{"team": "b", "machineType": "n2-standard-64"}],
}


def test_in_one_stack_a_shared_and_a_dedicated_team_get_their_prefixes(plan_of, stack_values):
    plan = plan_of(stack_values(**DEDICATED_B))
    conditions = {g.inputs["member"]: g.inputs["condition"] for g in wi_grants(plan)}
    assert conditions == {
        member("a", "pathways"): prefix_condition(DEV_BUCKET, "a"),
        member("b", "pathways"): prefix_condition(DEV_BUCKET, "b", "_/"),
    }
    grants = {g.name: g.inputs["condition"] for g in plan.by_type(BUCKET_MEMBER)}
    assert grants["pathways-dev-scratch-b-nodes"] == prefix_condition(DEV_BUCKET, "b", "_/")
    shared = grants["pathways-dev-scratch-nodes"]["expression"]
    objects = f"projects/_/buckets/{DEV_BUCKET}/objects/"
    assert iam_condition_admits(shared, objects + "a/job/0")
    assert not iam_condition_admits(shared, objects + "_/b/job/0")


def test_a_dedicated_teams_pathways_dir_is_refused_at_its_old_prefix(stack_values, config_error):
    workload = {
        "name": "nb",
        "team": "b",
        "pool": "v5e-b",
        "mode": "headless",
        "pathwaysDir": f"gs://{DEV_BUCKET}/b/nb",
    }
    pools = [{"name": "v5e-b", "generation": "v5e", "topology": "2x4", "slices": 1, "team": "b"}]
    error = config_error(stack_values(**DEDICATED_B, tpuPools=pools, workloads=[workload]))
    (issue,) = [i for i in error.issues if i.key.endswith("pathwaysDir")]
    assert f"use gs://{DEV_BUCKET}/_/b/<path>" in issue.message
