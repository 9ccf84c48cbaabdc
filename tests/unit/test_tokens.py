"""One home for each type token: the workload tokens of ``components.tokens`` are the types
pulumi-kubernetes gives the objects the workloads create (``kubernetes:<apiVersion>:<kind>``)."""

from components import tokens
from components.pathways import jobset_names, spec


def test_the_workload_tokens_name_the_objects_the_workloads_create():
    assert tokens.PATHWAYS_JOB == "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
    assert tokens.JOBSET == "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
    assert (spec.API_VERSION, spec.KIND) == ("pathways-job.pathways.domain/v1", "PathwaysJob")
    assert (jobset_names.API_VERSION, jobset_names.KIND) == ("jobset.x-k8s.io/v1alpha2", "JobSet")
