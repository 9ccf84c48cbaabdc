"""A Cloud Monitoring dashboard as typed pieces: the parts of the Monitoring API v1 ``Dashboard``
resource this project uses, with the API's field names and enum values. ``Dashboard.to_json()``
gives the JSON ``gcp.monitoring.Dashboard(dashboard_json=...)`` takes; the contract test checks
it against the API's schema (tests/data/monitoring-v1-dashboard-schema.json, from the API's
discovery document). Pure: pydantic only.

Source: the Monitoring API v1 discovery document (googleapis/google-api-python-client,
googleapiclient/discovery_cache/documents/monitoring.v1.json, revision 20240602): schemas
Dashboard, MosaicLayout, Tile, Widget, XyChart, DataSet, TimeSeriesQuery, TimeSeriesFilter,
Aggregation, Scorecard, SparkChartView, Threshold, Text, LogsPanel, DashboardFilter.
"""

from __future__ import annotations

import json
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

COLUMNS = 12  # MosaicLayout.columns: "between 1 and 12, inclusive"


class ApiModel(BaseModel):
    """A part of the API resource: camelCase names, unknown fields refused, immutable."""

    model_config = ConfigDict(
        alias_generator=to_camel, validate_by_name=True, extra="forbid", frozen=True
    )

    def api(self) -> dict:
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class PlotType(StrEnum):
    LINE = "LINE"
    STACKED_AREA = "STACKED_AREA"
    STACKED_BAR = "STACKED_BAR"
    HEATMAP = "HEATMAP"


class Aligner(StrEnum):
    ALIGN_MEAN = "ALIGN_MEAN"
    ALIGN_MAX = "ALIGN_MAX"
    ALIGN_SUM = "ALIGN_SUM"
    ALIGN_RATE = "ALIGN_RATE"


class Reducer(StrEnum):
    REDUCE_MEAN = "REDUCE_MEAN"
    REDUCE_MAX = "REDUCE_MAX"
    REDUCE_SUM = "REDUCE_SUM"


class Color(StrEnum):
    YELLOW = "YELLOW"
    RED = "RED"


class Direction(StrEnum):
    ABOVE = "ABOVE"
    BELOW = "BELOW"


class TextFormat(StrEnum):
    MARKDOWN = "MARKDOWN"
    RAW = "RAW"


class SparkChartType(StrEnum):
    SPARK_LINE = "SPARK_LINE"
    SPARK_BAR = "SPARK_BAR"


class FilterType(StrEnum):
    RESOURCE_LABEL = "RESOURCE_LABEL"
    METRIC_LABEL = "METRIC_LABEL"


class Aggregation(ApiModel):
    alignment_period: str = "60s"
    per_series_aligner: Aligner = Aligner.ALIGN_MEAN
    cross_series_reducer: Reducer | None = None
    group_by_fields: list[str] | None = None


class TimeSeriesFilter(ApiModel):
    filter: str
    aggregation: Aggregation | None = None


class TimeSeriesQuery(ApiModel):
    """Exactly one of a PromQL query and a Monitoring filter."""

    prometheus_query: str | None = None
    time_series_filter: TimeSeriesFilter | None = None
    unit_override: str | None = None

    @model_validator(mode="after")
    def _one(self) -> TimeSeriesQuery:
        if (self.prometheus_query is None) == (self.time_series_filter is None):
            raise ValueError("a TimeSeriesQuery has exactly one of its query forms")
        return self


class DataSet(ApiModel):
    time_series_query: TimeSeriesQuery
    plot_type: PlotType = PlotType.LINE
    legend_template: str | None = None
    min_alignment_period: str | None = None


class Threshold(ApiModel):
    value: float
    label: str | None = None
    color: Color | None = None
    direction: Direction | None = None


class XyChart(ApiModel):
    data_sets: list[DataSet] = Field(min_length=1)


class SparkChartView(ApiModel):
    spark_chart_type: SparkChartType = SparkChartType.SPARK_LINE


class Scorecard(ApiModel):
    time_series_query: TimeSeriesQuery
    thresholds: list[Threshold] | None = None
    spark_chart_view: SparkChartView | None = None


class Text(ApiModel):
    content: str
    format: TextFormat = TextFormat.MARKDOWN


class LogsPanel(ApiModel):
    filter: str
    resource_names: list[str] | None = None


class Widget(ApiModel):
    """A titled widget holding exactly one content."""

    title: str
    xy_chart: XyChart | None = None
    scorecard: Scorecard | None = None
    text: Text | None = None
    logs_panel: LogsPanel | None = None

    @model_validator(mode="after")
    def _one(self) -> Widget:
        contents = [self.xy_chart, self.scorecard, self.text, self.logs_panel]
        if sum(c is not None for c in contents) != 1:
            raise ValueError(f"widget {self.title!r} has exactly one content")
        return self


class Tile(ApiModel):
    x_pos: int = Field(ge=0)
    y_pos: int = Field(ge=0)
    width: int = Field(ge=1, le=COLUMNS)
    height: int = Field(ge=1)
    widget: Widget

    @model_validator(mode="after")
    def _inside(self) -> Tile:
        if self.x_pos + self.width > COLUMNS:
            raise ValueError(f"tile {self.widget.title!r} runs past column {COLUMNS}")
        return self

    def cells(self) -> set[tuple[int, int]]:
        return {
            (x, y)
            for x in range(self.x_pos, self.x_pos + self.width)
            for y in range(self.y_pos, self.y_pos + self.height)
        }


class MosaicLayout(ApiModel):
    columns: int = COLUMNS
    tiles: list[Tile]

    @model_validator(mode="after")
    def _no_overlap(self) -> MosaicLayout:
        taken: set[tuple[int, int]] = set()
        for tile in self.tiles:
            if taken & tile.cells():
                raise ValueError(f"tile {tile.widget.title!r} overlaps another")
            taken |= tile.cells()
        return self


class DashboardFilter(ApiModel):
    label_key: str
    filter_type: FilterType = FilterType.RESOURCE_LABEL
    string_value: str | None = None
    template_variable: str | None = None


class Dashboard(ApiModel):
    display_name: str = Field(min_length=1, max_length=512)
    mosaic_layout: MosaicLayout
    dashboard_filters: list[DashboardFilter] | None = None
    labels: dict[str, str] | None = None

    def to_json(self) -> str:
        """The resource's JSON, keys sorted (a stable diff in the plan and the PR)."""
        return json.dumps(self.api(), sort_keys=True, separators=(",", ":"))
