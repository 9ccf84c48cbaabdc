"""Every problem of a stack file in one run: after the schema refuses a stack, the values it
refused are set aside and the rest is validated again, so the checks that read it (another
entry's own checks, the checks across the stack, the workload checks, the preflight) still run.

A refused value is set aside in one of three ways, none of which can invent a problem:

- an unknown key is left out (the schema ignores nothing else);
- a value in a form the message names (``cpu: 24`` -> ``"24"``, ``capacity: spot`` ->
  ``{spot: true}``, ``X: 5`` -> ``"5"``) is read in that form;
- any other refused entry of a top-level list (a pool with a bad shape, a workload with a bad
  mode) is left out with the entries that name it (the workloads on that pool), and the checks
  that add up a whole list (the Kueue quota against the pools' chips) are skipped.

What cannot be set aside (a bad ``gcp.project``) stops the later checks; the report then says
that more checks follow.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from components.config.schema import PathwaysDeployment
from components.errors import ConfigIssue, config_loc, engine_text, is_flag

# Top-level lists whose refused entries are left out, and what the others name them by.
DROPPABLE = ("tpuPools", "workloads", "sharedServices", "teams", "dataBuckets")
_DEPENDENTS = {"tpuPools": "pool", "teams": "team"}
_DEPLOYMENTS = ("workloads", "sharedServices")
_DEFAULT_TEAM = PathwaysDeployment.model_fields["team"].default  # when an entry names none
_TOP_INDEX = re.compile(rf"(?<![\w.\]])({'|'.join(DROPPABLE)})\[(\d+)\]")


@dataclass
class Recovery:
    """The values validated in the current round, and what has been set aside from them."""

    values: dict[str, Any]
    # list name -> the original index of each entry still in ``values``
    kept: dict[str, list[int]] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)  # original keys: 'tpuPools[2]'

    @classmethod
    def of(cls, values: dict[str, Any]) -> Recovery:
        values = copy.deepcopy(values)
        kept = {
            name: list(range(len(values[name])))
            for name in DROPPABLE
            if isinstance(values.get(name), list)
        }
        return cls(values, kept)

    @property
    def partial(self) -> bool:
        """Whether entries of a list were left out (whole-list checks cannot run)."""
        return bool(self.left_out)

    def original(self, issue: ConfigIssue) -> ConfigIssue:
        """``issue`` with its top-level list indices (key and message) as the file has them."""
        return ConfigIssue(self._remap(issue.key), self._remap(issue.message))

    def _remap(self, text: str) -> str:
        def original(match: re.Match[str]) -> str:
            name, index = match[1], int(match[2])
            kept = self.kept.get(name, [])
            return f"{name}[{kept[index] if index < len(kept) else index}]"

        return _TOP_INDEX.sub(original, text)

    def set_aside(
        self,
        errors: Sequence[dict],
        root: type[BaseModel],
        hides_value: Callable[[str], bool] = lambda key: False,
    ) -> bool:
        """Set aside what ``errors`` (pydantic's, on ``values``) refused; False: nothing could
        be, so another round would find nothing new. A value at a key ``hides_value`` names (a
        credential's) is never read as text: a credential is not written as text at all."""
        progress = False
        refused: dict[str, set[int]] = {}
        for err in errors:
            loc = config_loc(err)
            hidden = hides_value(".".join(str(part) for part in loc))
            flag = is_flag(root, loc, err.get("input"))
            if err["type"] == "extra_forbidden":
                progress |= _delete(self.values, loc)
            elif not hidden and (form := read_as_meant(err, flag)) is not _NONE:
                progress |= _replace(self.values, loc, form)
            elif len(loc) >= 2 and loc[0] in self.kept and isinstance(loc[1], int):
                refused.setdefault(str(loc[0]), set()).add(loc[1])
        if refused:
            self._leave_out(refused)
            progress = True
        return progress

    def _leave_out(self, refused: dict[str, set[int]]) -> None:
        for name, indices in list(refused.items()):
            for index in indices:
                entry = self.values[name][index]
                named = entry.get("name") if isinstance(entry, dict) else None
                if name in _DEPENDENTS and isinstance(named, str):
                    self._add_dependents(_DEPENDENTS[name], named, refused)
        for name, indices in refused.items():
            entries, kept = self.values[name], self.kept[name]
            self.left_out += [f"{name}[{kept[i]}]" for i in sorted(indices)]
            self.values[name] = [e for i, e in enumerate(entries) if i not in indices]
            self.kept[name] = [k for i, k in enumerate(kept) if i not in indices]

    def _add_dependents(self, key: str, named: str, refused: dict[str, set[int]]) -> None:
        """The deployments that name a left-out pool or team are left out with it."""
        for name in _DEPLOYMENTS:
            for index, entry in enumerate(self.values.get(name) or []):
                if not isinstance(entry, dict):
                    continue
                value = entry.get(key, _DEFAULT_TEAM if key == "team" else None)
                if value == named:
                    refused.setdefault(name, set()).add(index)


_NONE = object()
_BOOL_WORDS = {"true": True, "false": False}


def read_as_meant(err: dict, flag: bool) -> object:
    """The value a refused one was meant as, when its message names that form (``_NONE``: no
    such form; ``flag``: the value is a true/false key of the mapping expected). Kept to the
    forms ``errors._in_our_words`` tells the user to write."""
    kind, value = err["type"], err.get("input")
    scalar = isinstance(value, bool | int | float)
    if kind in ("string_type", "env_value_form") and scalar:
        return engine_text(value)
    if kind in ("model_type", "dict_type") and flag:
        return {value: True}
    if kind == "int_type" and isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    if kind == "bool_type" and isinstance(value, str) and value in _BOOL_WORDS:
        return _BOOL_WORDS[value]
    return _NONE


def _parent(values: Any, loc: Sequence[str | int]) -> Any:
    for part in loc[:-1]:
        try:
            values = values[part]
        except (KeyError, IndexError, TypeError):
            return None
    return values


def _delete(values: dict[str, Any], loc: Sequence[str | int]) -> bool:
    parent = _parent(values, loc)
    if isinstance(parent, dict) and loc and loc[-1] in parent:
        del parent[loc[-1]]
        return True
    return False


def _replace(values: dict[str, Any], loc: Sequence[str | int], value: object) -> bool:
    parent = _parent(values, loc)
    if not loc or not isinstance(parent, dict | list):
        return False
    try:
        parent[loc[-1]] = value
    except (IndexError, TypeError):
        return False
    return True
