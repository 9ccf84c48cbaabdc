"""What the mock engine answers for resources and invokes during the offline plan.

New resources get no ID (as in a real preview). Outputs echo the inputs, plus the few outputs
providers derive deterministically from inputs (a service account's email, a bucket's URL).
Everything else only the cloud knows, so it stays unknown and shows as ``[unknown]``.
Invokes answer with a placeholder that says the value is looked up at deploy time.
A StackReference (a team stack's owner, a fleet's worker) answers with the contract that stack
exports, read from its stack file (``loader.reference_reader``).
"""

from __future__ import annotations

from typing import Any

from pulumi.runtime import rpc
from pulumi.runtime.mocks import MockCallArgs, MockResourceArgs, Mocks

from components.tokens import (
    BUCKET,
    CLUSTER,
    DEPLOY_TIME,
    FILESTORE_INSTANCE,
    GET_CLIENT_CONFIG,
    GET_CLUSTER,
    GET_PROJECT,
    GET_SUBNETWORK,
    SERVICE_ACCOUNT,
    STACK_REFERENCE,
)


def _service_account(inputs: dict[str, Any]) -> dict[str, Any]:
    email = f"{inputs['accountId']}@{inputs['project']}.iam.gserviceaccount.com"
    return {"email": email, "member": f"serviceAccount:{email}"}


def _bucket(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"url": f"gs://{inputs['name']}"}


def _cluster(inputs: dict[str, Any]) -> dict[str, Any]:
    # The control-plane endpoint exists only once GKE has created the cluster.
    endpoints = {"dnsEndpointConfig": {"allowExternalTraffic": True, "endpoint": rpc.UNKNOWN}}
    return {"endpoint": rpc.UNKNOWN, "controlPlaneEndpointsConfig": endpoints}


def _filestore(inputs: dict[str, Any]) -> dict[str, Any]:
    # The instance's IP addresses exist only once Filestore has created it.
    return {"networks": rpc.UNKNOWN}


_DERIVED_OUTPUTS = {
    CLUSTER: _cluster,
    FILESTORE_INSTANCE: _filestore,
    SERVICE_ACCOUNT: _service_account,
    BUCKET: _bucket,
}


def _get_project(args: dict[str, Any]) -> dict[str, Any]:
    return {"projectId": args.get("projectId"), "number": DEPLOY_TIME}


def _get_cluster(args: dict[str, Any]) -> dict[str, Any]:
    endpoint = {"dnsEndpointConfigs": [{"endpoint": DEPLOY_TIME, "allowExternalTraffic": True}]}
    return {
        "name": args.get("name"),
        "location": args.get("location"),
        "project": args.get("project"),
        "controlPlaneEndpointsConfigs": [endpoint],
    }


def _get_subnetwork(args: dict[str, Any]) -> dict[str, Any]:
    return {"name": args.get("name"), "region": args.get("region"), "ipCidrRange": DEPLOY_TIME}


def _get_client_config(args: dict[str, Any]) -> dict[str, Any]:
    # The deployer's access token exists only where `pulumi up` runs.
    return {"accessToken": DEPLOY_TIME, "id": DEPLOY_TIME, "project": DEPLOY_TIME}


_INVOKES = {
    GET_SUBNETWORK: _get_subnetwork,
    GET_PROJECT: _get_project,
    GET_CLUSTER: _get_cluster,
    GET_CLIENT_CONFIG: _get_client_config,
}


class PlanMocks(Mocks):
    def __init__(self, stack_outputs: dict[str, dict[str, Any]] | None = None) -> None:
        # Outputs of the stacks a team stack or a fleet references (``loader.reference_reader``).
        self.stack_outputs = stack_outputs or {}

    def echoes(self, type_token: str) -> bool:
        """Whether ``new_resource`` answers a resource of this type with its inputs alone and
        no ID (``("", inputs)``)."""
        return type_token != STACK_REFERENCE and type_token not in _DERIVED_OUTPUTS

    def new_resource(self, args: MockResourceArgs) -> tuple[str, dict[str, Any]]:
        if args.typ == STACK_REFERENCE:
            name = args.inputs.get("name", args.resource_id)
            if name not in self.stack_outputs:
                raise NotImplementedError(f"the offline plan has no outputs of stack {name!r}")
            # The engine reads a StackReference's outputs even in a preview.
            outputs = {"outputs": self.stack_outputs[name], "secretOutputNames": []}
            return name, {"name": name, **outputs}
        state = dict(args.inputs)
        derive = _DERIVED_OUTPUTS.get(args.typ)
        if derive is not None:
            state.update(derive(args.inputs))
        return "", state

    def call(self, args: MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        answer = _INVOKES.get(args.token)
        if answer is None:
            raise NotImplementedError(f"the offline plan has no answer for invoke {args.token}")
        return answer(args.args), []
