"""Data buckets and the preflight of every gs:// path a job names: Pathways pods act as the node
service account (host network), which reaches the scratch bucket and the stack's dataBuckets
only. Expected values are written out."""

from __future__ import annotations

import pytest

from components.errors import ConfigError
from components.pathways.gcs_access import Access, BucketGrant, GcsUse, gcs_uses, paths_in
from components.pathways.preflight import preflight_job
from components.pathways.scheduler_model import TPU_TAINT, NodePoolModel
from components.pathways.spec import PathwaysJobSpec
from components.resolve.preflight import bucket_grants, planned_pools, preflight
from components.tpu.machines import machine_type, tpu_host

# One v5e 2x4 slice on 4-chip hosts, as the CRD spells a worker.
V5E_2X4 = {"type": "ct5lp-hightpu-4t", "topology": "2x4", "numSlices": 1}

NODES = "pathways-dev-nodes@tpu-pathways-dev.iam.gserviceaccount.com"
SCRATCH = "tpu-pathways-dev-pathways-dev-pathways"
TRAIN = {
    "name": "train",
    "pool": "v5e",
    "image": "us-docker.pkg.dev/cloud-tpu-images/maxtext-images/tpu_pre_training:0.2.3",
    "command": ["python3", "train.py", "--data=gs://acme-datasets/c4/train"],
    "env": {"OUT": "gs://acme-ckpt/run1"},
    "resources": {"cpu": "8", "memory": "32Gi"},
}


def _report(config):
    return preflight(config, planned_pools(config), bucket_grants(config))


# --- finding the paths ----------------------------------------------------------------------


def test_paths_are_found_inside_flags_and_lists():
    assert paths_in("--input=gs://my-bucket/prompts/a.jsonl,gs://b.example/x y") == [
        "gs://my-bucket/prompts/a.jsonl",
        "gs://b.example/x",
    ]
    assert paths_in("gs://just-a-bucket") == ["gs://just-a-bucket"]
    assert paths_in("no path here: gs:/x, s3://bucket/y") == []


def test_every_place_a_job_names_a_path_is_searched():
    template = {
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "i",
                    "command": ["python3", "--in=gs://cmd-bucket/a"],
                    "args": ["gs://args-bucket/b"],
                    "env": [
                        {"name": "DATA", "value": "gs://env-bucket/c"},
                        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
                    ],
                }
            ]
        }
    }
    spec = PathwaysJobSpec.parse(
        {
            "workers": [V5E_2X4],
            "controller": {"deploymentMode": "default", "template": template},
            "customComponents": [
                {
                    "componentType": "worker",
                    "customFlags": ["--cache=gs://flag-bucket/d"],
                    "customEnv": [{"name": "X", "value": "gs://cenv-bucket/e"}],
                }
            ],
            "pathwaysDir": "gs://scratch-bucket/t/j",
        }
    )
    assert gcs_uses(spec) == [
        GcsUse("gs://scratch-bucket/t/j", "pathwaysDir", Access.READ_WRITE),
        GcsUse("gs://cmd-bucket/a", "command", Access.READ),
        GcsUse("gs://args-bucket/b", "args", Access.READ),
        GcsUse("gs://env-bucket/c", "env.DATA", Access.READ),
        GcsUse("gs://flag-bucket/d", "customComponents[worker].flags", Access.READ),
        GcsUse("gs://cenv-bucket/e", "customComponents[worker].env.X", Access.READ),
    ]


# --- the stack preflight ----------------------------------------------------------------------


def test_an_ungranted_bucket_is_refused_naming_path_identity_and_key(schema_of, stack_values):
    report = _report(schema_of(stack_values(workloads=[TRAIN])))
    assert [str(i) for i in report.issues] == [
        "workloads[0]: workload 'pathways/train': gs://acme-datasets/c4/train (command) needs "
        "read access, but its pods run on the host network, so they act as the node service "
        f"account {NODES} for GCS, which has no object access to gs://acme-datasets; add "
        "{name: acme-datasets, access: read} to dataBuckets (stack config)",
        "workloads[0]: workload 'pathways/train': gs://acme-ckpt/run1 (env.OUT) needs read "
        "access, but its pods run on the host network, so they act as the node service account "
        f"{NODES} for GCS, which has no object access to gs://acme-ckpt; add "
        "{name: acme-ckpt, access: read} to dataBuckets (stack config)",
    ]


def test_granted_buckets_pass_and_the_summary_shows_what_the_identity_reaches(
    config_of, stack_values
):
    buckets = [{"name": "acme-datasets"}, {"name": "acme-ckpt", "access": "readWrite"}]
    config = config_of(stack_values(workloads=[TRAIN], dataBuckets=buckets))
    report = _report(config)
    assert report.issues == []
    job = report.jobs["pathways/train"]
    assert job["buckets"] == {
        "acme-ckpt": "readWrite",
        "acme-datasets": "read",
        SCRATCH: "readWrite",
    }
    granted = f"granted to node service account {NODES}"
    assert job["gcsPaths"] == [
        {"path": f"gs://{SCRATCH}/pathways/train", "in": "pathwaysDir", "needs": "readWrite",
         "access": granted},
        {"path": "gs://acme-datasets/c4/train", "in": "command", "needs": "read",
         "access": granted},
        {"path": "gs://acme-ckpt/run1", "in": "env.OUT", "needs": "read", "access": granted},
    ]  # fmt: skip


def test_the_grants_are_the_scratch_bucket_and_the_data_buckets(config_of, stack_values):
    config = config_of(stack_values(dataBuckets=[{"name": "acme-datasets"}]))
    assert bucket_grants(config) == (
        # the team's Workload Identity: its prefix only (pods off the host network)
        BucketGrant("ns/pathways/sa/pathways", SCRATCH, Access.READ_WRITE, "pathways/"),
        # the shared pools' nodes: all of it but _/, the dedicated teams' (there are none)
        BucketGrant(NODES, SCRATCH, Access.READ_WRITE, "", ("_/",)),
        BucketGrant(NODES, "acme-datasets", Access.READ),
    )


def test_a_job_on_the_shared_pools_naming_the_dedicated_root_is_refused(config_error, stack_values):
    """The teams with dedicated pools keep their data under _/ of the scratch bucket (this
    stack's, or another stack's that writes to this bucket): the shared pools' account may not
    reach it, even in a stack with no dedicated team."""
    train = {**TRAIN, "command": ["gsutil", "cp", "-r", f"gs://{SCRATCH}/_/nlp/", "/tmp"]}
    train["env"] = {}
    error = config_error(stack_values(workloads=[train]))
    (issue,) = error.issues
    assert issue.key == "workloads[0]"
    assert f"gs://{SCRATCH}/_/nlp/ (command) needs read access" in issue.message
    assert NODES in issue.message


def test_a_custom_component_flag_is_checked_too(schema_of, stack_values):
    train = {**TRAIN, "command": ["python3", "t.py"], "env": {}}
    train["customComponents"] = [{"type": "worker", "flags": ["--x=gs://acme-cache/xla"]}]
    (issue,) = _report(schema_of(stack_values(workloads=[train]))).issues
    assert "gs://acme-cache/xla (customComponents[worker].flags) needs read access" in str(issue)


def test_the_example_serving_stack_grants_its_checkpoint_bucket(example_plan):
    job = example_plan("serving-v6e").summary["workloads"]["serving/batch-infer"]
    assert job["buckets"] == {
        "tpu-pathways-serving-data": "read",
        "tpu-pathways-serving-pathways-serving-pathways": "readWrite",
    }
    assert job["gcsPaths"][1] == {
        "path": "gs://tpu-pathways-serving-data/gemma3-4b/0/items",
        "in": "command",
        "needs": "read",
        "access": "granted to node service account "
        "pathways-serving-nodes@tpu-pathways-serving.iam.gserviceaccount.com",
    }


def test_a_dedicated_team_stack_knows_its_nodes_identity(example_plan):
    """nlp's pools are dedicated to it: its pods act as nlp's own node account, which the
    owner grants nlp's prefix of the scratch bucket (under _/, the dedicated teams') and
    nothing else."""
    job = example_plan("team-research").summary["workloads"]["nlp/nlp-notebook"]
    assert job["buckets"] == {
        "tpu-pathways-research-pathways-research-pathways/_/nlp/": "readWrite"
    }


# --- the Python API: a read grant is not a write grant ----------------------------------------


def _v5e_pool(identity: str | None) -> NodePoolModel:
    labels = {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "2x4",
        "cloud.google.com/gke-nodepool": "v5e-0",
    }
    host = tpu_host("ct5lp-hightpu-4t")
    return NodePoolModel("v5e-0", "v5e", host, labels, (TPU_TAINT,), 2, 4, identity)


def _cpu_pool(identity: str | None) -> NodePoolModel:
    labels = {"cloud.google.com/gke-nodepool": "cpu-np"}
    return NodePoolModel(
        "cpu-np", "cpu-np", machine_type("n2-standard-64"), labels, (), 2, 0, identity
    )


def _headless(pathways_dir: str) -> PathwaysJobSpec:
    return PathwaysJobSpec.parse(
        {
            "workers": [V5E_2X4],
            "controller": {"deploymentMode": "default"},
            "pathwaysDir": pathways_dir,
        }
    )


def test_a_read_grant_does_not_let_pods_write_their_pathways_dir():
    pools = [_v5e_pool("n@p.iam"), _cpu_pool("n@p.iam")]
    grants = [BucketGrant("n@p.iam", "acme-data", Access.READ)]
    report = preflight_job("j", "ns", _headless("gs://acme-data/j"), pools, grants)
    assert [str(i) for i in report.issues] == [
        "spec: PathwaysJob 'ns/j': gs://acme-data/j (pathwaysDir) needs readWrite access, but "
        "its pods run on the host network, so they act as the node service account n@p.iam for "
        "GCS, which has only read access to gs://acme-data; grant it roles/storage.objectUser "
        "on gs://acme-data (a bucket IAM member: DataBucketGrants)"
    ]
    written = preflight_job(
        "j", "ns", _headless("gs://acme-data/j"), pools,
        [BucketGrant("n@p.iam", "acme-data", Access.READ_WRITE)],
    )  # fmt: skip
    assert written.issues == []


def test_without_grants_the_python_api_does_not_check_paths():
    pools = [_v5e_pool("n@p.iam"), _cpu_pool("n@p.iam")]
    report = preflight_job("j", "ns", _headless("gs://acme-data/j"), pools)
    assert report.issues == []
    assert report.jobs["ns/j"]["pathwaysDirAccess"] == "not checked (no bucket grants given)"


# --- the dataBuckets key ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("buckets", "expected"),
    [
        (
            [{"name": "acme-data"}, {"name": "acme-data", "access": "readWrite"}],
            ["dataBuckets[1].name: 'acme-data' is listed more than once"],
        ),
        (
            [{"name": SCRATCH}],
            [
                f"dataBuckets[0].name: '{SCRATCH}' is the scratch bucket, which the node service "
                "account already has read-write access to; remove it from dataBuckets"
            ],
        ),
        (
            [{"name": "acme-data", "access": "write"}],
            ["dataBuckets[0].access: 'write' is not allowed: access is one of read or readWrite"],
        ),
    ],
)
def test_bad_data_buckets_are_refused(config_error, stack_values, buckets, expected):
    error = config_error(stack_values(dataBuckets=buckets))
    assert [str(i).split(" (got")[0] for i in error.issues] == expected


def test_a_stack_on_an_existing_cluster_cannot_grant_its_nodes(config_error, stack_values):
    values = stack_values(
        scratchBucket={"create": False, "name": "acme-scratch"},
        dataBuckets=[{"name": "acme-data"}],
    )
    values["cluster"] = {"name": "c", "existing": {"name": "c", "location": "us-west4"}}
    issues = [str(i) for i in config_error(values).issues]
    assert (
        "dataBuckets: needs a cluster this stack creates: the grants go to its node service "
        "account; on an existing cluster, grant the buckets to its nodes' service account where "
        "that cluster is managed"
    ) in issues


def test_a_team_stack_asks_its_owner_for_data_buckets():
    from components.resolve.loader import load_stack
    from tests.examples import EXAMPLES_DIR as STACKS_DIR

    owner = load_stack("team-research", STACKS_DIR).shared_cluster
    values = {
        "owner": "research-v5p",
        "teams": [{"name": "nlp"}],
        "dataBuckets": [{"name": "acme-data"}],
    }
    from components.resolve.checks import parse_stack_config

    with pytest.raises(ConfigError) as raised:
        parse_stack_config(values, owner=owner)
    assert [str(i) for i in raised.value.issues] == [
        "dataBuckets: this team stack's Pathways pods act as the node service account of owner "
        "stack 'research-v5p' (host network), which only that stack grants, but for the pools "
        "it dedicates to one of this stack's teams (dataBuckets[].team); ask it to add the "
        "buckets to its dataBuckets and remove them here"
    ]


def test_a_team_stack_grants_its_buckets_to_its_dedicated_pools(example_plan):
    """nlp's pools are dedicated to it in the owner: this team stack may grant nlp's node
    account its own buckets (a bucket IAM member, which the owner does not own)."""
    from components.resolve.checks import parse_stack_config
    from components.resolve.loader import load_stack
    from components.resolve.stack_files import STACKS_DIR

    owner = load_stack("team-research", STACKS_DIR).shared_cluster
    values = {
        "owner": "research-v5p",
        "teams": [{"name": "nlp"}],
        "dataBuckets": [{"name": "acme-data", "team": "nlp"}],
    }
    config = parse_stack_config(values, owner=owner)
    assert [(b.name, b.team) for b in config.data_buckets] == [("acme-data", "nlp")]


# --- what counts as a path (review finding 6) -----------------------------------------------


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("GS://evil/p", ["GS://evil/p"]),
        ("--in=Gs://evil/p", ["Gs://evil/p"]),
        ("gs://okbucket/a:gs://evil/b", ["gs://okbucket/a", "gs://evil/b"]),
        ("gs://okbucket/ags://evil/b", ["gs://okbucket/ags", "gs://evil/b"]),
        ("[gs://okbucket/a,gs://evil/b]", ["gs://okbucket/a", "gs://evil/b"]),
        ("{'a': 'gs://q-b/x'}; (gs://r-b/y)", ["gs://q-b/x", "gs://r-b/y"]),
        ("gs://$(BUCKET)/x", ["gs://$(BUCKET)/x"]),
        ("gs://b-1/dir//file.name-2_3~", ["gs://b-1/dir//file.name-2_3~"]),
        ("gs://", ["gs://"]),
        ("gs:///p", ["gs:///p"]),
    ],
)
def test_every_scheme_in_any_case_starts_a_path_ending_at_a_delimiter(text, paths):
    assert paths_in(text) == paths


RULES = (
    "bucket names are 3-63 lowercase letters, digits, '-', '_' or '.' (up to 222 with dots, 63 "
    "per dot-separated part), start and end with a letter or digit, are not an IP address and "
    "neither start with 'goog' nor contain 'google' or a close misspelling of it such as "
    "'g00gle'"
)
UNVERIFIED = (
    "unverified: the bucket is a $(VAR) reference the container's plain env does not define (a "
    "Secret's value or unset), which only the kubelet resolves"
)


def _denied(path: str, bucket: str) -> str:
    return (
        f"workloads[0]: workload 'pathways/train': {path} (command) needs read access, but its "
        "pods run on the host network, so they act as the node service account "
        f"{NODES} for GCS, which has no object access to gs://{bucket}; add "
        f"{{name: {bucket}, access: read}} to dataBuckets (stack config)"
    )


def test_hidden_and_invalid_paths_are_refused_and_env_references_resolved(schema_of, stack_values):
    workload = {
        **TRAIN,
        "command": [
            "python3",
            "--a=Gs://acme-evil/p",
            "--b=gs://acme-datasets/a:gs://acme-evil2/b",
            "--c=gs:///p",
            "[gs://OKBUCKET/x]",
            "--in=gs://$(BUCKET)/c4",
            "--out=gs://$(HIDDEN)/x",
        ],
        "env": {"BUCKET": "acme-datasets", "HIDDEN": {"secretKeyRef": {"name": "s", "key": "k"}}},
    }
    config = schema_of(stack_values(workloads=[workload], dataBuckets=[{"name": "acme-datasets"}]))
    report = _report(config)
    assert [str(i) for i in report.issues] == [
        _denied("Gs://acme-evil/p", "acme-evil"),
        _denied("gs://acme-evil2/b", "acme-evil2"),
        "workloads[0]: workload 'pathways/train': gs:///p (command) is not a valid Cloud Storage "
        f"path: '' is not a bucket name; {RULES}",
        "workloads[0]: workload 'pathways/train': gs://OKBUCKET/x (command) is not a valid Cloud "
        f"Storage path: 'OKBUCKET' is not a bucket name; {RULES}",
    ]
    granted = f"granted to node service account {NODES}"
    paths = report.jobs["pathways/train"]["gcsPaths"]
    assert [(p["path"], p["access"]) for p in paths[1:]] == [
        ("Gs://acme-evil/p", f"denied to {NODES}"),
        ("gs://acme-datasets/a", granted),
        ("gs://acme-evil2/b", f"denied to {NODES}"),
        ("gs:///p", "refused: not a Cloud Storage path"),
        ("gs://OKBUCKET/x", "refused: not a Cloud Storage path"),
        ("gs://acme-datasets/c4", granted),
        ("gs://$(HIDDEN)/x", UNVERIFIED),
    ]


def test_env_values_expand_earlier_entries_only_and_dollar_dollar_escapes():
    template = {
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "i",
                    "args": ["gs://$(B)/a", "gs://$$(B)/b"],
                    "env": [
                        {"name": "EARLY", "value": "gs://$(B)/e"},
                        {"name": "B", "value": "real-bucket"},
                        {"name": "LATE", "value": "gs://$(B)/l"},
                    ],
                }
            ]
        }
    }
    spec = PathwaysJobSpec.parse(
        {"workers": [V5E_2X4], "controller": {"deploymentMode": "default", "template": template}}
    )
    assert [(u.path, u.where, u.unresolved) for u in gcs_uses(spec)] == [
        ("gs://real-bucket/a", "args", False),
        ("gs://$(B)/b", "args", True),
        ("gs://$(B)/e", "env.EARLY", True),
        ("gs://real-bucket/l", "env.LATE", False),
    ]


# --- bounded reports (review finding 11) ----------------------------------------------------


def test_thousands_of_refused_paths_give_ten_problems_and_a_count(schema_of, stack_values):
    many = " ".join(f"gs://evil{n}/x" for n in range(1500))
    workload = {**TRAIN, "command": ["python3", many], "env": {}}
    report = _report(schema_of(stack_values(workloads=[workload])))
    messages = [str(i) for i in report.issues]
    assert len(messages) == 11
    assert messages[0] == _denied("gs://evil0/x", "evil0")
    assert messages[9] == _denied("gs://evil9/x", "evil9")
    assert messages[10] == (
        "workloads[0]: workload 'pathways/train': ... and 1490 more paths refused"
    )
    job = report.jobs["pathways/train"]
    assert len(job["gcsPaths"]) == 50
    assert job["gcsPathsNotShown"] == 1451  # 1500 paths and the pathwaysDir
