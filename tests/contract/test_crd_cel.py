"""The CRD CEL rules' evaluation (tests/crd_cel.py) follows the API server's: ``self`` at the
rule's place, defaults applied first, transition rules (``oldSelf``) only on an update where an
old value is at the same place (a map-type list's item by its keys), an erring rule rejects.
On Kueue v0.17.1's own CRD schemas where they have such rules; expected values are literals."""

from __future__ import annotations

import copy

from tests.crd_cel import crd_cel_errors
from tests.object_schemas import kueue_file

API = "kueue.x-k8s.io/v1beta2"


def kueue_rules(kind: str):
    return crd_cel_errors(kueue_file()["schemas"][f"{API}/{kind}"])


def local_queue(cluster_queue: str) -> dict:
    return {
        "apiVersion": API,
        "kind": "LocalQueue",
        "metadata": {"name": "q", "namespace": "alpha"},
        "spec": {"clusterQueue": cluster_queue},
    }


def cluster_queue(spec: dict) -> dict:
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": spec}


def test_a_transition_rule_is_skipped_on_create_and_holds_on_update():
    rules = kueue_rules("LocalQueue")
    assert rules(local_queue("a")) == []
    assert rules(local_queue("b"), old=local_queue("b")) == []
    assert rules(local_queue("b"), old=local_queue("a")) == [
        "spec.clusterQueue: field is immutable (CEL rule: self == oldSelf)"
    ]


def test_self_is_the_value_at_the_rules_place_each_list_item_in_turn():
    queue = cluster_queue(
        {
            "resourceGroups": [
                {
                    "coveredResources": ["google.com/tpu"],
                    "flavors": [
                        {"name": "t", "resources": [{"name": "google.com/tpu", "nominalQuota": 8}]}
                    ],
                },
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [{"name": "c", "resources": [{"name": "cpu", "nominalQuota": 1}]}],
                },
            ]
        }
    )
    assert kueue_rules("ClusterQueue")(queue) == [
        "spec.resourceGroups[1]: flavors must have the same number of resources as the "
        "coveredResources (CEL rule: self.flavors.all(x, size(x.resources) == "
        "size(self.coveredResources)))"
    ]


def test_the_object_is_defaulted_before_its_rules_are_evaluated():
    # preemption.reclaimWithinCohort defaults to Never (the CRD's default): the rule reads it.
    queue = cluster_queue({"preemption": {"borrowWithinCohort": {"policy": "LowerPriority"}}})
    assert kueue_rules("ClusterQueue")(queue) == [
        "spec.preemption: reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never (CEL "
        "rule: !(self.reclaimWithinCohort == 'Never' && has(self.borrowWithinCohort) &&  "
        "self.borrowWithinCohort.policy != 'Never'))"
    ]
    queue["spec"]["preemption"]["reclaimWithinCohort"] = "Any"
    assert kueue_rules("ClusterQueue")(queue) == []


def test_a_resource_flavors_transition_rules_hold_once_it_has_a_topology():
    flavor = {
        "apiVersion": API,
        "kind": "ResourceFlavor",
        "metadata": {"name": "f"},
        "spec": {"nodeLabels": {"pool": "a"}, "topologyName": "t"},
    }
    relabelled = copy.deepcopy(flavor)
    relabelled["spec"]["nodeLabels"] = {"pool": "b"}
    rules = kueue_rules("ResourceFlavor")
    assert rules(relabelled) == []
    assert rules(relabelled, old=flavor) == [
        "spec: nodeLabels are immutable when topologyName is set (CEL rule: "
        "!has(oldSelf.topologyName) || (has(self.nodeLabels) == has(oldSelf.nodeLabels) && "
        "(!has(self.nodeLabels) || self.nodeLabels == oldSelf.nodeLabels)))"
    ]


IMMUTABLE = [{"rule": "self == oldSelf", "message": "immutable"}]
LISTS = {
    "type": "object",
    "properties": {
        "byName": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "size": {"type": "integer"}},
                "x-kubernetes-validations": IMMUTABLE,
            },
        },
        "atomic": {
            "type": "array",
            "items": {"type": "integer", "x-kubernetes-validations": IMMUTABLE},
        },
        "needsA": {
            "type": "object",
            "properties": {"a": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.a > 0", "message": "a must be positive"}],
        },
    },
}


def test_old_list_items_are_matched_by_map_keys_only_and_an_erring_rule_rejects():
    rules = crd_cel_errors(LISTS)
    old = {"byName": [{"name": "x", "size": 1}, {"name": "y", "size": 2}], "atomic": [1, 2]}
    new = {"byName": [{"name": "y", "size": 3}, {"name": "z", "size": 9}], "atomic": [5, 6]}
    # y (moved to index 0, changed) is matched by name; z has no old value; an atomic list's
    # items are never matched, so their transition rule never runs.
    assert rules(new, old=old) == ["byName[0]: immutable (CEL rule: self == oldSelf)"]
    # self.a read where there is no a: the evaluation errs, and the API server rejects.
    assert rules({"needsA": {}}) == ["needsA: a must be positive (CEL rule: self.a > 0)"]
    assert rules({"needsA": {"a": 1}}) == []
