"""The session page and its window endpoint, through the test client."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from loopguard_site.replay.services import replay_session
from loopguard_site.timeline.panels import HEAD_CHARS
from loopguard_site.timeline.selectors import session_streams
from loopguard_site.transcripts.services import session_create_from_events

from .conftest import REASONING_LOOP, TOOLS_LOOP, monitor_results, replayed_demo


def embedded_json(html: str, element_id: str):
    match = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(match.group(1))


@pytest.mark.django_db
def test_it_highlights_the_unit_repetitions_onset_and_firing_point_of_a_replayed_loop(browser_client):
    session = replayed_demo(REASONING_LOOP)
    (d,) = session.detections.all()
    tiles = [(str(s), str(min(s + d.period, d.end))) for s in range(d.start, d.end, d.period)]

    html = browser_client.get(f"/sessions/{session.pk}/").content.decode()

    assert f'<span class="marker marker-onset" data-detection="{d.pk}" data-at="{d.start}"' in html
    assert f'<span class="marker marker-fired" data-detection="{d.pk}" data-at="{d.at}"' in html
    unit = re.findall(
        rf'<span class="piece hl-region hl-unit" data-s="(\d+)" data-e="(\d+)" data-detections="{d.pk}">', html
    )
    reps = re.findall(
        rf'<span class="piece hl-region hl-rep (hl-rep-\w+)" data-s="(\d+)" data-e="(\d+)" data-detections="{d.pk}">',
        html,
    )
    assert unit == tiles[:1]
    assert reps == [("hl-rep-odd" if k % 2 else "hl-rep-even", *tile) for k, tile in enumerate(tiles) if k]
    assert len(reps) >= 1
    assert f'class="detection-link action-{d.action}" data-detection="{d.pk}"' in html
    assert '<script src="/static/plotly/plotly.min.js"></script>' in html
    figures = embedded_json(html, "timeline-figures")
    assert figures["offset"]["layout"]["yaxis"]["categoryarray"] == ["reasoning", "turns", d.detector]
    assert "time" not in figures  # the file's events carry no `t`
    targets = embedded_json(html, "session-targets")
    # Items: the turn (0), its reasoning (1), how it finished (2).
    assert targets["detections"] == {
        str(d.pk): {"channel": "reasoning", "start": d.start, "end": d.end, "at": d.at, "items": [1, 1]}
    }
    assert targets["first"] == d.pk  # the page opens there


@pytest.mark.django_db
def test_it_lists_tool_calls_with_repeats_and_the_detections_that_fired(browser_client):
    session = replayed_demo(TOOLS_LOOP)
    html = browser_client.get(f"/sessions/{session.pk}/").content.decode()
    rows = re.findall(r'<li class="tool-row([^"]*)" data-index="(\d+)"', html)
    assert rows == [(" failed", "0"), (" repeat failed", "1"), (" repeat failed", "2"), (" repeat failed", "3")]
    assert html.count("repeat of #0 · call") == 3
    # Six of the eight detections are on the tools channel; the two `backoff` ones are on `session`.
    assert re.findall(r'data-detection="(\d+)">⚑ (\w+) fired', html) == [
        (str(d.pk), d.detector) for d in session.detections.filter(channel="tools").order_by("event_seq", "id")
    ]


@pytest.mark.django_db
def test_the_profile_selector_shows_that_profiles_detections_and_checkpoints(browser_client):
    session = replayed_demo(REASONING_LOOP, ("default", "seed000"))
    _, checkpoints = monitor_results(REASONING_LOOP, "seed000")
    html = browser_client.get(f"/sessions/{session.pk}/?profile=seed000").content.decode()
    assert '<option value="seed000" selected>seed000</option>' in html
    assert "No detections under seed000." in html
    assert f"{len(checkpoints)} checkpoint evaluations" in html
    traces = {t["name"]: t for t in embedded_json(html, "timeline-figures")["offset"]["data"]}
    assert traces["checkpoint: no loop"]["customdata"] == [
        ["range", c["channel"], c["start"], c["end"]] for c in sorted(checkpoints, key=lambda c: c["checkpoint"])
    ]


@pytest.mark.django_db
def test_transcript_text_is_escaped_everywhere(browser_client):
    loop = "<script>alert(1)</script> again. "
    events = [{"type": "reasoning", "text": loop} for _ in range(40)]
    session = session_create_from_events(
        title="<b>t</b>", model="", source_format="events", parser_version="1", events=events
    )
    replay_session(session=session, profile_name="default")
    assert session.detections.count() == 1

    html = browser_client.get(f"/sessions/{session.pk}/").content.decode()

    assert "<script>alert" not in html and "<b>t</b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; again." in html
    assert "unit: \\u0026lt;script\\u0026gt;alert(1)\\u0026lt;/script\\u0026gt;" in html  # hover, in json_script


@pytest.mark.django_db
def test_a_session_not_replayed_yet_says_so(browser_client):
    session = replayed_demo(TOOLS_LOOP, profiles=())
    html = browser_client.get(f"/sessions/{session.pk}/").content.decode()
    assert "This session has not been replayed yet" in html
    assert f'href="/replays/new?session={session.pk}"' in html


@pytest.mark.django_db
def test_it_needs_a_login_and_answers_404_for_an_unknown_session(browser_client):
    assert Client().get("/sessions/1/").status_code == 302
    assert browser_client.get("/sessions/999999/").status_code == 404


@pytest.mark.django_db
def test_the_session_list_links_to_the_page(browser_client):
    session = replayed_demo(TOOLS_LOOP)
    assert f'href="/sessions/{session.pk}/"' in browser_client.get("/sessions/").content.decode()


@pytest.mark.django_db
def test_the_window_endpoint_gives_a_page_of_text_with_highlights(browser_client):
    session = replayed_demo(REASONING_LOOP)
    (d,) = session.detections.all()
    text = session_streams(session).texts["reasoning"]
    url = f"/sessions/{session.pk}/window"

    answer = browser_client.get(url, {"channel": "reasoning", "start": d.at - 5, "end": d.at + 5, "profile": "default"})

    assert answer.status_code == 200
    items = answer.json()["items"]
    assert [(i["marker"], i["at"], i["detection"]) for i in items if "marker" in i] == [("fired", d.at, d.pk)]
    assert "".join(i.get("text", "") for i in items) == text[d.at - 5 : d.at + 5]
    marker = next(n for n, i in enumerate(items) if "marker" in i)
    assert (items[marker - 1]["end"], items[marker + 1]["start"]) == (d.at, d.at)
    assert "hl-region" in items[0]["classes"]
    tools = browser_client.get(url, {"channel": "tools", "start": 0, "end": 1}).json()
    assert (tools["start"], tools["end"], len(tools["rows"])) == (0, 0, 0)  # the riddle has no tool calls


@pytest.mark.parametrize(
    ("endpoint", "query", "field"),
    [("window", {"channel": "user", "start": 0, "end": 1}, "channel"),
     ("window", {"channel": "content", "start": "-1", "end": 1}, "start"),
     ("window", {"channel": "content", "start": 0}, "end"),
     ("figure", {"axis": "seq", "x0": 0, "x1": 1}, "axis"), ("figure", {"x0": 0}, "x0"),
     ("figure", {"x0": 5, "x1": 5}, "x0"), ("figure", {"x0": "nan", "x1": 1}, "x0"),
     ("figure", {"x0": "a", "x1": 1}, "x0")],
)  # fmt: skip
@pytest.mark.django_db
def test_the_window_and_figure_endpoints_refuse_bad_parameters(browser_client, endpoint, query, field):
    session = replayed_demo(REASONING_LOOP, profiles=())
    answer = browser_client.get(f"/sessions/{session.pk}/{endpoint}", query)
    assert (answer.status_code, answer.json()["field"]) == (400, field)


@pytest.mark.django_db
def test_the_first_window_is_the_head_of_the_channel(browser_client):
    session = replayed_demo(REASONING_LOOP, profiles=())
    html = browser_client.get(f"/sessions/{session.pk}/").content.decode()
    assert f'<span class="text-window" data-start="0" data-end="{HEAD_CHARS}">' in html
    assert f'<button type="button" class="gap" data-start="{HEAD_CHARS}" data-end="4449">' in html


@pytest.mark.django_db
def test_the_figure_endpoint_gives_a_zoomed_timeline_and_its_detections_targets(browser_client):
    session = replayed_demo(REASONING_LOOP)
    (d,) = session.detections.all()
    query = {"axis": "offset", "x0": d.start, "x1": d.at, "profile": "default"}

    answer = browser_client.get(f"/sessions/{session.pk}/figure", query).json()

    assert answer["figure"]["layout"]["xaxis"]["range"] == [d.start, d.at]
    stop = next(t for t in answer["figure"]["data"] if t["name"] == f"detection: {d.action}")
    assert (stop["x"], stop["customdata"]) == ([d.at], [["detection", d.pk]])  # reasoning only: position = offset
    assert answer["targets"] == {
        str(d.pk): {"channel": "reasoning", "start": d.start, "end": d.end, "at": d.at, "items": [1, 1]}
    }
    before = browser_client.get(f"/sessions/{session.pk}/figure", {**query, "x1": d.at - 1}).json()
    assert before["targets"] == {}
