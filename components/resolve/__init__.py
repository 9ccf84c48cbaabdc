"""The resolve layer: a stack's validated keys (``components.config``) made into what the program
builds, and refused when it would fail at run time. Pure: no Pulumi; it imports config and the
pure domain (``pathways``, ``tpu``), never a Pulumi component (``gke``, ``addons``,
``workloads``), which in turn never import config or resolve (``tests/unit/test_layers.py``).

- ``stack_files``: a stack file (or the engine's config map) in the engine's string form;
- ``loader``: one stack file loaded and validated (``load_stack``);
- ``checks``: ``parse_stack_config``, the whole validation: schema, ``stack_checks`` (across the
  stack's keys), ``quota_checks``, ``capacity`` (sizes against GKE's limits),
  ``workload_checks`` (each job against the stack) and the ``preflight`` (would every job run);
- ``workload_specs``: workload and shared-service config to ``PathwaysJobSpec``s, JobSets and
  addresses, the one mapping of workload keys the program and the preflight share;
- ``tenancy``: many teams on one cluster, and a fleet of clusters (its own docstring).
"""
