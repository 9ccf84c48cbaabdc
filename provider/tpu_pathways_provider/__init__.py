"""The tpu-pathways component package: coarse components for Pulumi programs in any language.

``COMPONENTS`` are hosted by ``serve`` (the plugin's ``__main__.py``); their args are TypedDicts
of plain values that translate into the project's typed ``*Args`` and config models, so each is
the Python API's implementation, not a second one. The package's schema (``schema.json``) is
what Pulumi's analyzer makes of them: ``python -m tpu_pathways_provider.schema`` prints it.
"""

import sys
from importlib.metadata import version

import pulumi.provider

from tpu_pathways_provider.cluster import Cluster
from tpu_pathways_provider.host import TpuPathwaysProvider
from tpu_pathways_provider.slice_pool import TpuSlicePool
from tpu_pathways_provider.team import TeamTenant
from tpu_pathways_provider.workload import PathwaysWorkload

NAME = "tpu-pathways"
DISTRIBUTION = "tpu-pathways"
COMPONENTS = [Cluster, TpuSlicePool, PathwaysWorkload, TeamTenant]
__all__ = ["COMPONENTS", "Cluster", "PathwaysWorkload", "TeamTenant", "TpuSlicePool", "provider"]


def provider() -> TpuPathwaysProvider:
    """The package's provider, versioned as the installed project."""
    return TpuPathwaysProvider(COMPONENTS, NAME, None, version(DISTRIBUTION))


def serve() -> None:
    """Serve the components to the engine (what ``component_provider_host`` does, with the
    provider that reports config errors per input)."""
    pulumi.provider.main(provider(), sys.argv[1:])
