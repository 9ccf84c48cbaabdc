"""What comparing two plans yields: property changes, resource changes and one stack's diff
(see ``components.plan.diff``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from components.plan.critical_path import CriticalPath
from components.plan.model import UNKNOWN


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


ABSENT: Any = _Absent()


KIND_ORDER = ("replace", "remove", "add", "update", "ignored")


@dataclass(frozen=True)
class PropertyChange:
    path: str
    before: Any = ABSENT
    after: Any = ABSENT
    replace_reason: str | None = None  # why this change forces a replacement
    ignored: bool = False  # under options.ignoreChanges: Pulumi does not apply it
    recreates_nodes: bool = False
    moves_zone: bool = False  # the pool's nodes move to another zone

    def to_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {"path": self.path}
        if self.before is not ABSENT:
            row["before"] = self.before
        if self.after is not ABSENT:
            row["after"] = self.after
        if self.replace_reason:
            row["forcesReplacement"] = self.replace_reason
        if self.ignored:
            row["ignored"] = True
        if self.recreates_nodes:
            row["recreatesNodes"] = True
        if self.moves_zone:
            row["movesZone"] = True
        return row


@dataclass(frozen=True)
class ResourceChange:
    urn: str
    type: str
    name: str
    kind: str  # add, remove, replace, update, ignored
    changes: tuple[PropertyChange, ...] = ()
    delete_before_replace: bool = False
    protected: bool = False
    # Hosts of a TPU node pool (after the change); None: a TPU pool whose host count the plan
    # does not know (it is only known at deploy time); 0 for anything else.
    tpu_hosts: int | None = 0

    @property
    def recreates_nodes(self) -> bool:
        return any(c.recreates_nodes and not c.ignored for c in self.changes)

    @property
    def moves_tpu_hosts(self) -> bool:
        """A TPU pool whose hosts (however many) all move to another zone."""
        return self.tpu_hosts != 0 and any(c.moves_zone and not c.ignored for c in self.changes)

    def to_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "kind": self.kind,
        }
        if self.kind == "replace":
            row["deleteBeforeReplace"] = self.delete_before_replace
        if self.protected and self.kind in ("replace", "remove"):
            row["protected"] = True
        if self.recreates_nodes:
            row["recreatesNodes"] = True
        if self.moves_tpu_hosts:
            row["movesTpuHosts"] = UNKNOWN if self.tpu_hosts is None else self.tpu_hosts
        if self.changes:
            row["changes"] = [c.to_dict() for c in self.changes]
        return row


@dataclass
class StackDiff:
    """One stack's plan compared with its base plan (``before`` None: the stack is new)."""

    stack: str
    resources: list[ResourceChange] = field(default_factory=list)
    unchanged: int = 0
    new_stack: bool = False
    removed_stack: bool = False
    capacity: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    cost_before: dict[str, Any] | None = None
    cost_after: dict[str, Any] | None = None
    error: str | None = None  # the current plan could not be made
    cluster: str | None = None  # the name of the GKE cluster the stack creates, if it does
    path_before: CriticalPath | None = None  # modeled `pulumi up` critical path of each plan
    path_after: CriticalPath | None = None
    fleet: dict[str, Any] | None = None  # a fleet stack's `fleet` output (mermaid.fleet_flowchart)
    # The jobs of the base plan by the node pool (GKE name, or a TPU pool's name) they run on:
    # what a change to that pool interrupts.
    jobs_on: dict[str, list[str]] = field(default_factory=dict)

    def count(self, kind: str) -> int:
        return sum(1 for r in self.resources if r.kind == kind)

    @property
    def counts(self) -> dict[str, int]:
        return {kind: self.count(kind) for kind in KIND_ORDER}

    @property
    def moved_tpu_hosts(self) -> int:
        """TPU hosts a zone change moves (every host of every TPU pool whose zone changes), of
        the pools whose host count is known (``unsized_tpu_moves`` counts the others)."""
        return sum(r.tpu_hosts or 0 for r in self.resources if r.moves_tpu_hosts)

    @property
    def unsized_tpu_moves(self) -> int:
        """TPU pools a zone change moves whose host count is not known before deploy."""
        return sum(1 for r in self.resources if r.moves_tpu_hosts and r.tpu_hosts is None)

    @property
    def has_changes(self) -> bool:
        return any(r.kind != "ignored" for r in self.resources) or self.error is not None

    def to_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {"stack": self.stack}
        if self.error is not None:
            row["error"] = self.error
            return row
        row.update(
            newStack=self.new_stack,
            removedStack=self.removed_stack,
            counts={**self.counts, "unchanged": self.unchanged},
            resources=[r.to_dict() for r in self.resources],
            capacity=self.capacity,
            cost={"before": self.cost_before, "after": self.cost_after},
        )
        return row
