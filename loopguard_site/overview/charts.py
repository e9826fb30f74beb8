"""The overview's Plotly figures (pure: selector rows in, figure dicts out).

Every bar and point carries in `customdata` the session list URL filtered to
what it counts (UI_CONTRACT.md's query parameters); overview.js follows it on
a click. Each figure also comes with `rows`: the same numbers and links as a
table, shown under the chart for keyboards and screen readers. Model and
profile names are user data: Plotly's hover and tick text is HTML-ish
markup, so they are escaped here.
"""

from __future__ import annotations

import datetime as dt
import functools
from urllib.parse import urlencode

from django.urls import get_script_prefix, reverse

from loopguard_site.timeline.charts import escape_hover

PALETTE = ("#2456c9", "#c0392b", "#2f855a", "#b7791f", "#7b4fc9", "#0f8a9d", "#d35400", "#5f6b7a", "#c2185b")
STATE_COLORS = {"live": "#2456c9", "looping": "#c0392b", "stalled": "#b7791f"}
NO_MODEL = "(no model)"
DAY_MS = 86_400_000
FONT = {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 13, "color": "#1d2330"}


@functools.lru_cache
def _session_list_path(script_prefix: str) -> str:
    return reverse("timeline:session_list")  # reverse() costs ~50 µs; a dashboard asks for hundreds


def session_list_url(**params: str) -> str:
    """The session list filtered by `params` (empty values left out)."""
    query = urlencode({key: value for key, value in params.items() if value not in ("", None)})
    base = _session_list_path(get_script_prefix())
    return f"{base}?{query}" if query else base


def _layout(**extra) -> dict:
    layout = {
        "font": FONT,
        "margin": {"l": 16, "r": 16, "t": 40, "b": 48},
        "height": 320,
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
        "hoverlabel": {"align": "left"},
        "xaxis": {"automargin": True},
        "yaxis": {"gridcolor": "#dde3ea", "rangemode": "tozero", "automargin": True},
    }
    layout.update(extra)
    return layout


def _model_name(model: str) -> str:
    return model or NO_MODEL


def _bars_height(bars: int) -> int:
    """Height of a horizontal chart of `bars` categories."""
    return 110 + 34 * max(bars, 2)


PERCENT_AXIS = {"range": [0, 102], "tickvals": [0, 25, 50, 75, 100], "ticksuffix": "%", "gridcolor": "#dde3ea"}
# Room right of a percent axis for a bar's value written past its end ("100%", "12/12").
PERCENT_MARGIN = {"l": 16, "r": 56, "t": 40, "b": 48}


def _percent(part: int, whole: int) -> float | None:
    return round(100 * part / whole, 1) if whole else None


def models_figure(per_model: list[dict], verdicts: list[dict]) -> dict:
    """Two panels sharing the model axis: sessions per model (left), and
    each profile's loop rate among the model's scanned sessions (right, %)."""
    models = [row["model"] for row in per_model]
    labels = [escape_hover(_model_name(model)) for model in models]
    traces = [
        {
            "type": "bar",
            "name": "sessions",
            "orientation": "h",
            "y": labels,
            "x": [row["sessions"] for row in per_model],
            "marker": {"color": "#8ea6d8"},
            "text": [row["sessions"] for row in per_model],
            "textposition": "outside",
            "cliponaxis": False,
            "customdata": [session_list_url(model=model) for model in models],
            "hovertemplate": "%{y}: %{x} sessions<extra></extra>",
        }
    ]
    rows = [
        {"label": f"{_model_name(row['model'])}: sessions", "value": row["sessions"],
         "url": session_list_url(model=row["model"])}
        for row in per_model
    ]  # fmt: skip
    profiles = list(dict.fromkeys(row["profile"] for row in verdicts))
    for index, profile in enumerate(profiles):
        mine = {row["model"]: row for row in verdicts if row["profile"] == profile}
        shown = [model for model in models if model in mine]
        traces.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": f"loop rate · {escape_hover(profile)}",
                "xaxis": "x2",
                "y": [escape_hover(_model_name(model)) for model in shown],
                "x": [_percent(mine[model]["looped"], mine[model]["scanned"]) for model in shown],
                "text": [f"{mine[model]['looped']}/{mine[model]['scanned']}" for model in shown],
                "textposition": "outside",
                "cliponaxis": False,
                "marker": {"color": PALETTE[(index + 1) % len(PALETTE)]},
                "customdata": [session_list_url(model=model, profile=profile, verdict="loop") for model in shown],
                "hovertemplate": "%{y} · "
                + escape_hover(profile)
                + ": %{x}% looped (%{text} scanned sessions)<extra></extra>",
            }
        )
        rows += [
            {
                "label": f"{_model_name(model)} · {profile}: looped",
                "value": f"{mine[model]['looped']} of {mine[model]['scanned']} scanned",
                "url": session_list_url(model=model, profile=profile, verdict="loop"),
            }
            for model in shown
        ]
    most = max((row["sessions"] for row in per_model), default=0)
    layout = _layout(
        barmode="group",
        bargap=0.25,
        height=_bars_height(len(models) * max(1, len(profiles)) // 2 + len(models)),
        yaxis={"autorange": "reversed", "automargin": True, "type": "category"},
        xaxis={"domain": [0, 0.3], "title": {"text": "sessions"}, "gridcolor": "#dde3ea", "rangemode": "tozero",
               "dtick": 1 if most <= 8 else None, "automargin": True},
        xaxis2={**PERCENT_AXIS, "domain": [0.38, 1], "anchor": "y", "title": {"text": "loop rate (looped / scanned)"}},
        margin=PERCENT_MARGIN,
    )  # fmt: skip
    return {"data": traces, "layout": layout, "rows": rows}


def detections_figure(per_day: list[dict], first_day: dt.date, last_day: dt.date) -> dict:
    """Detections per day the session was created, stacked by detector and
    type, on an axis from `first_day` to `last_day`."""
    keys = list(dict.fromkeys((row["detector"], row["type"]) for row in per_day))
    traces, rows = [], []
    for index, (detector, kind) in enumerate(keys):
        mine = [row for row in per_day if (row["detector"], row["type"]) == (detector, kind)]
        name = f"{detector} · {kind}"
        urls = [session_list_url(created=row["day"].isoformat(), detector=detector, type=kind) for row in mine]
        traces.append(
            {
                "type": "bar",
                "name": escape_hover(name),
                "x": [row["day"].isoformat() for row in mine],
                "y": [row["detections"] for row in mine],
                "marker": {"color": PALETTE[index % len(PALETTE)]},
                "width": [DAY_MS * 0.8] * len(mine),
                "customdata": urls,
                "hovertemplate": escape_hover(name) + "<br>sessions created %{x}: %{y} detections<extra></extra>",
            }
        )
        rows += [
            {"label": f"{row['day']:%Y-%m-%d} · {name}", "url": url,
             "value": f"{row['detections']} detections"}
            for row, url in zip(mine, urls, strict=True)
        ]  # fmt: skip
    layout = _layout(
        barmode="stack",
        xaxis={
            "range": [f"{first_day - dt.timedelta(days=1)} 12:00", f"{last_day} 12:00"],
            "type": "date",
            "tickformat": "%Y-%m-%d",
            "automargin": True,
            "title": {"text": "session created (UTC)"},
        },
        yaxis={"title": {"text": "detections"}, "gridcolor": "#dde3ea", "rangemode": "tozero", "automargin": True},
    )
    return {"data": traces, "layout": layout, "rows": rows}


def live_figure(states: list[dict]) -> dict:
    """Sessions open now, per live state."""
    urls = [session_list_url(live="1", state=row["state"]) for row in states]
    trace = {
        "type": "bar",
        "x": [row["state"] for row in states],
        "y": [row["sessions"] for row in states],
        "marker": {"color": [STATE_COLORS[row["state"]] for row in states]},
        "customdata": urls,
        "hovertemplate": "%{x}: %{y} sessions<extra></extra>",
    }
    rows = [
        {"label": row["state"], "value": row["sessions"], "url": url} for row, url in zip(states, urls, strict=True)
    ]
    most = max((row["sessions"] for row in states), default=0)
    layout = _layout(
        height=240,
        showlegend=False,
        yaxis={"gridcolor": "#dde3ea", "rangemode": "tozero", "dtick": 1 if most <= 8 else None, "tickformat": ",d"},
    )
    return {"data": [trace], "layout": layout, "rows": rows}


def labels_figure(progress: list[dict]) -> dict:
    """Per model × profile: the share of detections labelled, and the share
    of reviewers' detection labels that say false positive."""
    names = [escape_hover(f"{_model_name(row['model'])} · {row['profile']}") for row in progress]
    judged = [row["true_loop"] + row["false_positive"] for row in progress]
    labelled_urls = [
        session_list_url(model=row["model"], profile=row["profile"], label="unlabelled") for row in progress
    ]
    fp_urls = [session_list_url(model=row["model"], profile=row["profile"], label="false_positive") for row in progress]
    traces = [
        {
            "type": "bar",
            "name": "detections labelled",
            "orientation": "h",
            "y": names,
            "x": [_percent(row["labelled"], row["detections"]) for row in progress],
            "text": [f"{row['labelled']} of {row['detections']} detections" for row in progress],
            "texttemplate": "%{x}",
            "textposition": "outside",
            "cliponaxis": False,
            "marker": {"color": "#2456c9"},
            "customdata": labelled_urls,
            "hovertemplate": "%{y}<br>labelled: %{x}% (%{text})<br>click: the unlabelled sessions<extra></extra>",
        },
        {
            "type": "bar",
            "name": "labels saying false positive",
            "orientation": "h",
            "y": names,
            "x": [_percent(row["false_positive"], total) for row, total in zip(progress, judged, strict=True)],
            "text": [f"{row['false_positive']} of {total} labels" for row, total in zip(progress, judged, strict=True)],
            "texttemplate": "%{x}",
            "textposition": "outside",
            "cliponaxis": False,
            "marker": {"color": "#c0392b"},
            "customdata": fp_urls,
            "hovertemplate": "%{y}<br>false positives: %{x}% (%{text})<extra></extra>",
        },
    ]
    rows = []
    for row, total, labelled_url, fp_url in zip(progress, judged, labelled_urls, fp_urls, strict=True):
        name = f"{_model_name(row['model'])} · {row['profile']}"
        rows.append({"label": f"{name}: labelled", "value": f"{row['labelled']} of {row['detections']} detections",
                     "url": labelled_url})  # fmt: skip
        rows.append({"label": f"{name}: false positives", "value": f"{row['false_positive']} of {total} labels",
                     "url": fp_url})  # fmt: skip
    layout = _layout(
        barmode="group",
        height=_bars_height(2 * len(progress)),
        yaxis={"autorange": "reversed", "automargin": True, "type": "category"},
        xaxis={**PERCENT_AXIS, "automargin": True},
        margin=PERCENT_MARGIN,
    )
    return {"data": traces, "layout": layout, "rows": rows}
