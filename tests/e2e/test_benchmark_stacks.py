"""The benchmark's parts that can be wrong without any timing: the generated stacks
(benchmarks/stacks.py), the bare baseline (benchmarks/baseline.py) registering exactly what the
project registers, and the statistics of benchmarks/run.py. The benchmark itself is not a test:
nothing here measures time."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from components.plan.engine import plan_file
from components.resolve.loader import load_stack
from components.sdk.pulumi_private import SECRET_SIG, SIG_KEY
from tests.examples import EXAMPLES_DIR

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"
UNKNOWN_SIG = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # the SDK's wire sentinel for an unknown
STACKS = sorted(
    p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in EXAMPLES_DIR.glob("Pulumi.*.yaml")
)


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCH_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    return _load("stacks")


@pytest.fixture(scope="module")
def baseline() -> ModuleType:
    return _load("baseline")


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _load("run")


@pytest.mark.parametrize("slices", [1, 16, 64, 256, 7])
def test_generated_stack_is_valid_and_exact(generator, tmp_path, slices):
    config = load_stack(generator.write_stack(tmp_path, slices), tmp_path)
    assert sum(pool.slices for pool in config.tpu_pools) == slices
    assert len(config.workloads) == len(config.tpu_pools)  # one workload per pool
    for pool, workload in zip(config.tpu_pools, config.workloads, strict=True):
        assert workload.pool == pool.name and workload.slices == pool.slices
        assert len(pool.name) <= 30 and len(workload.name) <= 22
    if slices >= 16:  # several pools, mixed generations
        assert {p.shape.generation.value for p in config.tpu_pools} == {"v5e", "v5p", "v6e"}
        assert {p.topology for p in config.tpu_pools} == {"2x4", "2x2x2", "2x2"}


# --- the baseline: SDK classes by rule ----------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "qualified"),
    [
        ("gcp:container/nodePool:NodePool", "pulumi_gcp.container.node_pool.NodePool"),
        ("gcp:projects/iAMMember:IAMMember", "pulumi_gcp.projects.iam_member.IAMMember"),
        (
            "gcp:serviceaccount/iAMMember:IAMMember",
            "pulumi_gcp.serviceaccount.iam_member.IAMMember",
        ),
        ("pulumi:providers:kubernetes", "pulumi_kubernetes.provider.Provider"),
        ("pulumi:pulumi:StackReference", "pulumi.stack_reference.StackReference"),
        ("kubernetes:core/v1:Namespace", "pulumi_kubernetes.core.v1.Namespace.Namespace"),
        (
            "kubernetes:apps/v1:DeploymentPatch",
            "pulumi_kubernetes.apps.v1.DeploymentPatch.DeploymentPatch",
        ),
        (
            "kubernetes:scheduling.k8s.io/v1:PriorityClass",
            "pulumi_kubernetes.scheduling.v1.PriorityClass.PriorityClass",
        ),
        ("kubernetes:yaml/v2:ConfigFile", "pulumi_kubernetes.yaml.v2.ConfigFile.ConfigFile"),
        # CRD kinds and the project's own components have no SDK class.
        ("kubernetes:kueue.x-k8s.io/v1beta1:ClusterQueue", None),
        ("kubernetes:pathways-job.pathways.domain/v1:PathwaysJob", None),
        ("kubernetes:networking.gke.io/v1:ManagedCertificate", None),
        ("tpu-pathways:gke:Cluster", None),
    ],
)
def test_sdk_class_is_derived_from_the_type_token(baseline, token, qualified):
    cls = baseline.sdk_class(token)
    assert (None if cls is None else f"{cls.__module__}.{cls.__qualname__}") == qualified


def test_an_unmappable_custom_type_is_refused(baseline):
    with pytest.raises(baseline.UnknownTypeError, match="nosuchpkg:mod/thing:Thing"):
        baseline.resolve_types({"nosuchpkg:mod/thing:Thing"}, {"nosuchpkg:mod/thing:Thing": True})


def _baseline_of(plan, bench, baseline, tmp_path) -> list[dict]:
    shape_path = tmp_path / "shape.json"
    count = bench.write_shape(plan.to_dict(), shape_path)
    assert count == len(plan.resources)
    return baseline.run_shape(json.loads(shape_path.read_text()))


def _local(urn: str | None) -> str:
    """A URN without its stack and project (``urn:pulumi:STACK::PROJECT::``); the root stack
    (named after stack and project) as ``Stack``."""
    local = urn.split("::", 2)[2] if urn else ""
    return "Stack" if local.startswith("pulumi:pulumi:Stack::") else local


def _registered(records) -> list[tuple]:
    """Type, URN, parent and dependencies of each registration, in a stable order."""
    return sorted(
        (r["type"], _local(r["urn"]), _local(r["parent"]), tuple(map(_local, r["dependencies"])))
        for r in records
    )


@pytest.mark.parametrize("stack", STACKS)
def test_baseline_registers_what_the_project_registers(
    stack, example_plan, bench, baseline, tmp_path
):
    """Every type the project registers maps to an SDK class (or is a CRD kind or a component),
    and the baseline registers the same resources with the same structure."""
    plan = example_plan(stack)
    records = _baseline_of(plan, bench, baseline, tmp_path)
    assert len(records) == len(plan.resources)
    assert _registered(records) == _registered(r.to_dict() for r in plan.resources)


def test_baseline_of_a_generated_stack(generator, bench, baseline, tmp_path):
    stack = generator.write_stack(tmp_path, 16)
    plan = plan_file(stack, tmp_path)
    records = _baseline_of(plan, bench, baseline, tmp_path)
    assert sorted(r["type"] for r in records) == sorted(r.type for r in plan.resources)


# --- run.py statistics (known answers) ----------------------------------------------------------


def test_spread_median_range_and_quartiles(bench):
    figures = bench.spread([5.0, 1.0, 3.0, 2.0, 4.0])
    assert figures == {"median": 3.0, "min": 1.0, "max": 5.0, "q1": 2.0, "q3": 4.0}


def test_pair_ratios_pair_in_order(bench):
    assert bench.pair_ratios([2.0, 3.0], [1.0, 6.0]) == [2.0, 0.5]
    with pytest.raises(ValueError):
        bench.pair_ratios([1.0], [1.0, 2.0])


def test_least_squares_slope_and_intercept(bench):
    slope, intercept = bench.least_squares([1, 16, 64, 256], [2.5, 4.0, 8.8, 28.0])
    assert slope == pytest.approx(0.1)
    assert intercept == pytest.approx(2.4)


def test_marginal_growth_is_one_when_linear_above_the_fixed_part(bench):
    # 2 s fixed + 10 ms per resource: linear.
    resources = [31, 52, 124, 412]
    linear = [2.0 + 0.01 * r for r in resources]
    assert bench.marginal_growth(resources, linear) == pytest.approx(1.0)
    # Quadratic per-resource cost: the marginal cost at 412 resources is far above that at 124,
    # although the fixed part makes the whole 412-resource time only ~1.3x the 124-resource one.
    quadratic = [2.0 + 0.00001 * r * r for r in resources]
    assert bench.marginal_growth(resources, quadratic) == pytest.approx((412 + 31) / (124 + 31))


# Sizes of the generated stacks (resources at 1, 16, 64, 256, 1,024 and 2,048 slices, roughly)
# and made-up CPU medians: 0.3 s fixed and 5 ms per resource, with or without a quadratic term.
RESOURCES = [51, 100, 205, 412, 1590, 3170]
LINEAR = [0.3 + 0.005 * r for r in RESOURCES]
QUADRATIC = [0.3 + 0.005 * r + 1e-6 * r * r for r in RESOURCES]


def test_quadratic_fit_recovers_known_coefficients(bench):
    assert bench.quadratic_fit([1, 2, 3, 4], [6, 17, 34, 57]) == pytest.approx((1.0, 2.0, 3.0))


def test_growth_of_a_linear_program(bench):
    figures = bench.growth(RESOURCES, LINEAR)
    assert figures["quadratic_share"] == pytest.approx(0.0, abs=1e-9)
    assert figures["band_growth"] == pytest.approx(1.0)
    assert figures["band_marginals_ms"] == [5.0, 5.0, 5.0, 5.0, 5.0]


def test_growth_of_an_injected_quadratic(bench):
    # c r^2 / (b r + c r^2) at 3,170 resources: 10.049 / 25.899; the last band costs
    # 5 + 4.76 ms per resource against 5 + 0.305 in the first band above the smallest.
    figures = bench.growth(RESOURCES, QUADRATIC)
    assert figures["quadratic_share"] == pytest.approx(0.388, abs=1e-3)
    assert figures["band_growth"] == pytest.approx(9.76 / 5.305, abs=1e-3)


def _slope_result(bench, medians, baseline_slope=5.0):
    growth = bench.growth(RESOURCES, medians)
    return {
        "slope": {
            "slope_ratio": 1.0,
            "fit": {"project": {**growth, "slope_ms_per_resource": baseline_slope}},
        }
    }


def test_the_growth_check_fails_on_a_quadratic_and_passes_on_linear_data(bench):
    def verdicts(medians):
        return {c["target"]: c["ok"] for c in bench.check_targets(_slope_result(bench, medians))}

    growth_targets = [
        "project growth: quadratic term's share of the largest size's variable CPU",
        "project growth: marginal CPU per resource, last size band / first",
    ]
    assert [verdicts(LINEAR)[t] for t in growth_targets] == [True, True]
    assert [verdicts(QUADRATIC)[t] for t in growth_targets] == [False, False]


def test_a_missed_target_is_reported_with_its_spread(bench):
    def ratio(median, q1, q3):
        return {"median": median, "min": q1 - 0.1, "max": q3 + 0.1, "q1": q1, "q3": q3}

    result = {
        "process": [
            {"stack": "bench-1024", "slices": 1024, "cpu_s_ratio": ratio(1.1, 1.05, 1.15)},
            {"stack": "bench-2048", "slices": 2048, "cpu_s_ratio": ratio(1.45, 1.4, 1.5)},
            # example stacks are reported, not checked
            {"stack": "dev", "cpu_s_ratio": ratio(2.0, 1.9, 2.1)},
        ],
    }
    checks = bench.check_targets(result)
    assert [(c["target"], c["ok"], c["margin_wider_than_noise"]) for c in checks] == [
        ("bench-1024 whole process, project / typed floor (CPU, equal exit)", True, True),
        ("bench-2048 whole process, project / typed floor (CPU, equal exit)", False, False),
    ]
    assert checks[0]["spread"] == pytest.approx([0.95, 1.05, 1.15, 1.25])
    assert "MISS bench-2048" in bench.report({"targets": checks})


def _ratio(median, q1, q3):
    return {"median": median, "min": q1 - 0.1, "max": q3 + 0.1, "q1": q1, "q3": q3}


def test_targets_against_the_independent_floor(bench):
    """1.5x at 1,024 and 2,048 slices, 1.3x on an example stack, memory 1.3x on every row."""

    def row(stack, slices, cpu, rss):
        return {
            "stack": stack,
            **({"slices": slices} if slices else {}),
            "cpu_s_ratio": _ratio(1.0, 0.95, 1.05),
            "cpu_s_ratio_independent": _ratio(cpu, cpu - 0.02, cpu + 0.02),
            "rss_mb_ratio_independent": _ratio(rss, rss - 0.01, rss + 0.01),
        }

    rows = [row("bench-2048", 2048, 1.45, 1.2), row("dev", None, 1.35, 1.31)]
    verdicts = {c["target"]: c["ok"] for c in bench.check_targets({"process": rows})}
    assert verdicts == {
        "bench-2048 whole process, project / typed floor (CPU, equal exit)": True,
        "bench-2048 whole process, project / independent floor (CPU, equal exit)": True,
        "bench-2048 peak memory, project / independent floor (RSS)": True,
        "dev whole process, project / independent floor (CPU, equal exit)": False,
        "dev peak memory, project / independent floor (RSS)": False,
    }


@pytest.mark.parametrize("stack", STACKS)
def test_the_independent_floor_registers_the_same_as_plain_registrations(
    stack, example_plan, bench, baseline, tmp_path
):
    """Same types, URNs, parents, providers and dependencies as the project, and the plan's
    input dicts as given (a provider's non-string inputs are JSON text on the wire)."""
    plan = example_plan(stack)
    shape_path = tmp_path / "shape.json"
    bench.write_shape(plan.to_dict(), shape_path)
    records = baseline.run_shape(json.loads(shape_path.read_text()), independent=True)
    assert _registered(records) == _registered(r.to_dict() for r in plan.resources)
    inputs = {_local(r["urn"]): _secrets_shown(r["inputs"]) for r in records}
    for resource in plan.resources:
        if resource.custom and not resource.type.startswith("pulumi:providers:"):
            assert inputs[_local(resource.urn)] == resource.inputs, resource.name


def _secrets_shown(value):
    """A recorded wire value with each secret and unknown as the plan shows it ("[secret]",
    "[unknown]")."""
    if value == UNKNOWN_SIG:
        return "[unknown]"
    if isinstance(value, dict):
        if set(value) == {"value", SIG_KEY} and value[SIG_KEY] == SECRET_SIG:
            return "[secret]"
        return {k: _secrets_shown(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_secrets_shown(v) for v in value]
    return value


@pytest.mark.parametrize(
    ("stack", "reads"),
    [("team-research", ["research-v5p"]), ("fleet", ["worker-dev", "worker-research-v5p"])],
)
def test_a_plan_that_reads_other_stacks_registers_its_own_resources_alone(
    stack, reads, example_plan, bench, registrations, tmp_path
):
    """A team stack's plan reads its owner's contract, a fleet's plan its workers', from their
    stack files without running their programs: the engine registers the plan's own resources
    and its stack, nothing else, so the floor's shape (``write_shape``: the plan's resources)
    is all the plan registers; the other stacks are StackReferences (reads) in both."""
    plan = example_plan(stack)  # first: it plans here when no earlier test of the run did
    shape_path = tmp_path / "shape.json"
    assert bench.write_shape(plan.to_dict(), shape_path) == len(plan.resources)
    shape = bench.read_shape(str(shape_path))
    stack_type, reference = "pulumi:pulumi:Stack", "pulumi:pulumi:StackReference"
    assert sorted(r["name"] for r in shape if r["type"] == reference) == reads
    registrations.clear()
    plan_file(stack, EXAMPLES_DIR)
    floor = [(r["type"], r["name"]) for r in shape if r["type"] != reference]
    assert sorted(t for t in registrations if t[0] != stack_type) == sorted(floor)
    assert [t for t, _ in registrations].count(stack_type) == 1


# --- the diff base shape (benchmarks/diff_base.py, benchmarks/scaling.py) -----------------------


@pytest.fixture(scope="module")
def diff_base() -> ModuleType:
    return _load("diff_base")


def test_a_diff_base_holds_n_extra_resources_the_current_plan_removes(
    diff_base, example_plan, tmp_path, capsys
):
    from components.plan.diff import diff_plans
    from components.plan.model import Plan
    from tests.helpers import run_cli

    current = example_plan("research-v5p")
    own = {r.urn for r in current.resources}
    base = diff_base.diff_base(current.to_dict(), 100)
    extras = base["resources"][len(current.resources) :]
    assert len(extras) == 100 and base["summary"]["resources"] == len(current.resources) + 100
    assert {r["type"] for r in extras} <= diff_base.GROWS
    # 25 resources of growing types per round (research-v5p's team bucket grant, the metrics
    # scrapers' accounts and the collector's bindings of Kueue and JobSet, and what team
    # research's dedicated pools add): rounds x0-x3 whole
    assert sorted({r["name"].rsplit("-", 1)[1] for r in extras}) == [f"x{k}" for k in range(4)]
    # the extras join the plan's own components (or the stack), cluster and provider
    stack = "urn:pulumi:research-v5p::tpu-pathways::pulumi:pulumi:Stack::tpu-pathways-research-v5p"
    assert {r["parent"] for r in extras} <= own | {stack}
    assert {d for r in extras for d in r["dependencies"]} <= own
    diff = diff_plans(Plan.load(base), current)
    assert diff.counts == {"replace": 0, "remove": 100, "add": 0, "update": 0, "ignored": 0}
    path = diff_base.write_diff_base(current.to_dict(), 10, tmp_path / "base.json")
    code, out, _ = run_cli(capsys, "plan", "--stack", "research-v5p", "--diff", str(path))
    assert code == 0
    assert out.startswith("Stack research-v5p: 10 to remove · ")


def _shape_part(bench, medians, max_cpu_s=20.0):
    sizes = [4064, 8064, 16064, 35064, 70064]
    row = [{"size": s, "cpu_s": {"median": m}} for s, m in zip(sizes, medians, strict=True)]
    return {
        "shape": "diff-base",
        "unit": "resources in the diff base",
        "max_cpu_s": max_cpu_s,
        "sizes": row,
        "growth": bench.growth(sizes, medians),
    }


def test_the_scaling_check_fails_on_a_quadratic_and_on_a_missed_budget(bench):
    sizes = [4064, 8064, 16064, 35064, 70064]
    linear = [1.6 + 0.0001 * s for s in sizes]  # 8.6 s at 70,064
    quadratic = [1.6 + 0.0001 * s + 2e-9 * s * s for s in sizes]  # 18.4 s: within the budget
    slow = [1.6 + 0.0003 * s for s in sizes]  # 22.6 s: linear, over the budget

    def verdicts(medians):
        return [c["ok"] for c in bench.check_targets({"scaling": [_shape_part(bench, medians)]})]

    assert verdicts(linear) == [True, True, True]
    assert verdicts(quadratic) == [False, False, True]
    assert verdicts(slow) == [True, True, False]
    checks = bench.check_targets({"scaling": [_shape_part(bench, slow)]})
    assert checks[2]["target"] == (
        "diff-base at 70,064 resources in the diff base: CPU s of the whole process"
    )
    assert "MISS diff-base at 70,064" in bench.report({"targets": checks})


# --- the teams count shape (benchmarks/stacks.py, benchmarks/scaling.py) -----------------------


def test_a_teams_stack_plans_eight_resources_per_team(generator, tmp_path):
    """Per team namespace: its TeamNamespace, Namespace, ServiceAccount, NetworkPolicy, two
    ResourceQuotas (pods and chips; CPU and memory), LocalQueue and the Workload Identity grant
    on its prefix; the admission policies are the cluster's, one per kind, whatever the number
    of teams."""
    from components.plan.engine import plan_file

    counts = {}
    for teams in (2, 5):
        directory = tmp_path / f"t{teams}"
        directory.mkdir()
        plan = plan_file(generator.write_teams_stack(directory, teams), directory)
        counts[teams] = len(plan.resources)
        policies = [r for r in plan.resources if r.type.endswith(":ValidatingAdmissionPolicy")]
        assert len(policies) == 5
    assert (counts[5] - counts[2]) / 3 == 8


def test_the_teams_shape_is_registered_with_its_budget():
    scaling = _load("scaling")
    shape = scaling.SHAPES["teams"]
    assert (shape.steps[-1], shape.max_cpu_s) == (1000, 15.0)
