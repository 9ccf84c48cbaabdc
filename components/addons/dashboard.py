"""The stack's Cloud Monitoring dashboard, built from typed pieces (``dashboard_model``): TPU duty
cycle and TensorCore utilization per pool and per workload, HBM use, slices ready against
requested, Kueue's pending and admitted workloads per queue and its admission wait, the hourly
cost of idle TPU time, the controllers, and the stack's logs with a link per workload. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from components.addons import metric_queries as q
from components.addons.dashboard_model import (
    Aggregation,
    Aligner,
    Color,
    Dashboard,
    DashboardFilter,
    DataSet,
    Direction,
    LogsPanel,
    MosaicLayout,
    PlotType,
    Reducer,
    Scorecard,
    SparkChartView,
    Text,
    Threshold,
    Tile,
    TimeSeriesFilter,
    TimeSeriesQuery,
    Widget,
    XyChart,
)


@dataclass(frozen=True)
class WorkloadLink:
    """A workload of the stack: where it runs and its Logs Explorer link."""

    name: str
    namespace: str
    logs_url: str


@dataclass(frozen=True)
class DashboardArgs:
    """What the dashboard shows. ``idle_chip_hour``: USD per TPU chip-hour of the stack's pools
    (None: not priced, so no idle-cost tile); ``kueue``: the stack queues its jobs;
    ``controllers``: the namespaces of the controllers installed; ``volumes``: some workload
    mounts a bucket (the FUSE error tile)."""

    stack: str
    cluster: str
    project: str
    namespaces: Sequence[str]
    workloads: Sequence[WorkloadLink] = ()
    kueue: bool = True
    controllers: Sequence[str] = ("jobset-system",)
    idle_chip_hour: float | None = None
    volumes: bool = False


def _promql(query: str, unit: str | None = None) -> TimeSeriesQuery:
    return TimeSeriesQuery(prometheus_query=query, unit_override=unit)


def _line(title: str, *queries: str, plot: PlotType = PlotType.LINE, legend: str | None = None):
    data = [
        DataSet(time_series_query=_promql(x), plot_type=plot, legend_template=legend)
        for x in queries
    ]
    return Widget(title=title, xy_chart=XyChart(data_sets=data))


def _card(title: str, query: str, threshold: Threshold | None = None, unit: str | None = None):
    return Widget(
        title=title,
        scorecard=Scorecard(
            time_series_query=_promql(query, unit),
            thresholds=[threshold] if threshold else None,
            spark_chart_view=SparkChartView(),
        ),
    )


def _tensorcore(cluster: str) -> Widget:
    """A Monitoring filter (not PromQL), grouped per node."""
    query = TimeSeriesQuery(
        time_series_filter=TimeSeriesFilter(
            filter=(
                f'metric.type="{q.TENSORCORE}" resource.type="k8s_node" '
                f'resource.labels.cluster_name="{cluster}"'
            ),
            aggregation=Aggregation(
                per_series_aligner=Aligner.ALIGN_MEAN,
                cross_series_reducer=Reducer.REDUCE_MEAN,
                group_by_fields=["resource.label.node_name"],
            ),
        )
    )
    return Widget(
        title="TensorCore utilization per node (%)",
        xy_chart=XyChart(data_sets=[DataSet(time_series_query=query)]),
    )


def _links(args: DashboardArgs) -> Widget:
    rows = [f"- `{w.namespace}/{w.name}`: [logs]({w.logs_url})" for w in args.workloads]
    content = "\n".join(
        [
            f"**{args.stack}** on cluster `{args.cluster}` (project `{args.project}`): TPU "
            "duty cycle is the share of time the TensorCores were busy; idle chips under a "
            "training job cost money for nothing.",
            "",
            *(rows or ["No workloads in this stack."]),
        ]
    )
    return Widget(title="Stack and workloads", text=Text(content=content))


def _logs(args: DashboardArgs) -> Widget:
    namespaces = " OR ".join(f'"{n}"' for n in args.namespaces)
    return Widget(
        title="Errors in the stack's namespaces",
        logs_panel=LogsPanel(
            filter=(
                f'resource.type="k8s_container" resource.labels.cluster_name="{args.cluster}" '
                f"resource.labels.namespace_name=({namespaces}) severity>=ERROR"
            ),
            resource_names=[f"projects/{args.project}"],
        ),
    )


def _scorecards(args: DashboardArgs, scope: q.Scope) -> list[Widget]:
    cards = [
        _card(
            "TPU duty cycle (%)",
            q.mean_duty_cycle(scope),
            Threshold(value=20, color=Color.YELLOW, direction=Direction.BELOW),
        )
    ]
    if args.idle_chip_hour is not None:
        cost = q.idle_cost_per_hour(scope, args.idle_chip_hour)
        cards.append(_card("Idle TPU time (USD per hour)", cost, unit="USD"))
    if args.kueue:
        cards.append(_card("Pending in Kueue", f"sum({q.PENDING}{scope.scraped})"))
        cards.append(_card("Admitted by Kueue", f"sum({q.ADMITTED}{scope.scraped})"))
    if args.controllers:
        minimum = f"min({q.controllers_available(scope, args.controllers)})"
        cards.append(
            _card(
                "Controllers: fewest ready replicas",
                minimum,
                Threshold(value=1, color=Color.RED, direction=Direction.BELOW),
            )
        )
    return cards


def _charts(args: DashboardArgs, scope: q.Scope) -> list[Widget]:
    charts = [
        _line(
            "TPU duty cycle per workload (%)",
            q.duty_cycle_per_jobset(scope),
            legend="${jobset_name}",
        ),
        _tensorcore(args.cluster),
        _line("HBM in use per node (%)", q.hbm_use(scope)),
        _line(
            "Worker slices ready / requested per workload",
            q.slices(scope, q.READY),
            q.slices(scope, q.SPECIFIED),
        ),
        _line("Restarts per workload", f"sum by (jobset_name) ({q.RESTARTS}{scope.jobsets()})"),
    ]
    if args.kueue:
        charts += [
            _line(
                "Kueue pending workloads per queue",
                q.pending_per_queue(scope),
                plot=PlotType.STACKED_AREA,
            ),
            _line(
                "Kueue pending workloads per team",
                q.pending_per_team(scope),
                plot=PlotType.STACKED_AREA,
                legend="${exported_namespace}",
            ),
            _line("Kueue admission wait, 95th percentile (s)", q.admission_wait_p95(scope)),
            _line(
                "TPU chips used / nominal quota per queue",
                q.tpu_quota(scope, q.QUEUE_USAGE),
                q.tpu_quota(scope, q.QUEUE_QUOTA),
            ),
        ]
    if args.volumes:
        errors = (
            "sum by (fs_error_category) (rate(kubernetes_io:gcsfusecsi_fs_ops_error_count"
            f'{{cluster_name="{args.cluster}"}}[5m]))'
        )
        charts.append(
            _line("Cloud Storage FUSE errors per second", errors, plot=PlotType.STACKED_BAR)
        )
    return charts


def _grid(widgets: list[Widget], top: int, width: int, height: int) -> list[Tile]:
    """Widgets left to right, top to bottom, ``12 // width`` to a row."""
    per_row = 12 // width
    return [
        Tile(
            x_pos=(i % per_row) * width,
            y_pos=top + (i // per_row) * height,
            width=width,
            height=height,
            widget=w,
        )
        for i, w in enumerate(widgets)
    ]


def stack_dashboard(args: DashboardArgs) -> Dashboard:
    """One dashboard per stack: links, scorecards, charts, then the logs panel."""
    scope = q.Scope(args.cluster)
    tiles = [Tile(x_pos=0, y_pos=0, width=12, height=3, widget=_links(args))]
    cards = _scorecards(args, scope)
    tiles += _grid(cards, top=3, width=12 // len(cards) if len(cards) <= 4 else 3, height=3)
    charts_top = 3 + 3 * -(-len(cards) // 4)
    charts = _charts(args, scope)
    tiles += _grid(charts, top=charts_top, width=6, height=4)
    logs_top = charts_top + 4 * -(-len(charts) // 2)
    tiles.append(Tile(x_pos=0, y_pos=logs_top, width=12, height=4, widget=_logs(args)))
    return Dashboard(
        display_name=f"tpu-pathways {args.stack} ({args.cluster})",
        mosaic_layout=MosaicLayout(tiles=tiles),
        dashboard_filters=[
            DashboardFilter(
                label_key="cluster_name", string_value=args.cluster, template_variable="cluster"
            )
        ],
    )
