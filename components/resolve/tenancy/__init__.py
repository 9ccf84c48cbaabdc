"""Tenancy, as one feature: many teams on one cluster (an owner stack and its team stacks) and a
fleet (a manager cluster that dispatches to the clusters of owner stacks with MultiKueue).

Here, the resolution (pure):

- ``shared_cluster``: the contract an owner stack exports and a team stack reads, the keys a team
  stack may not restate and the namespaces it may not take;
- ``ownership``: every stack file of the project sorted by role (owners, team stacks, fleets)
  with the conflicts between them, and the owner a team stack names checked to be one;
- ``cross_stack``: the conflicts only stacks seen together show (derived names, namespaces, a
  worker in two fleets);
- ``fleet``: a fleet stack validated as a whole, with ``fleet_checks`` (what needs no worker's
  contract), ``fleet_sets`` (the worker set of each team and workload, the manager's queues),
  ``fleet_dispatch`` (the MultiKueue model, ``components.pathways.multikueue_model``, on what
  the fleet plans) and ``fleet_placement`` (each workload on each worker of its set).

Elsewhere, by layer: the schema of the contract, the fleet and the teams in
``components/config/schema/`` (``contract.py``, ``fleet.py``, ``teams.py``); the Pulumi side in
``components/stack/owner.py`` (the StackReference a team stack reads its owner through) and
``components/stack/fleet.py`` (a fleet's program), with ``components/addons/multikueue.py`` and
``multikueue_worker.py``,
``addons/teams.py`` and ``addons/team_isolation.py`` (the objects each team gets).
"""
