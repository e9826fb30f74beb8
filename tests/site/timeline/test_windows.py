"""The session page of a long session, read from its stored layout
(timeline/windows.py): the same conversation, item windows, text and tool
windows and detection targets as the session laid out whole, a timeline
summarized in bins with the detections placed exactly, transcript text
escaped in every window, and a query count that does not grow with the
session."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.services import session_create_from_events
from tests.site.transcripts.test_layout_rows import turn_events

from .test_session_page import embedded_json

WHOLE = 10**9  # a layout threshold no test session reaches: laid out whole per request
DEEP = 25  # the turn of the deep detection


def long_session(turns: int):
    """`turns` turns (5 events, 4 items, 20 positions each) and one text_loop
    detection deep in it, on the content of turn DEEP (offsets 250..260)."""
    session = session_create_from_events(
        title="long", model="", source_format="events", parser_version="t", events=turn_events(0, turns)
    )
    detection = Detection.objects.create(
        session=session, profile="default", event_seq=5 * DEEP + 3, detector="text_loop", type="block_cycle",
        channel="content", start=10 * DEEP, end=10 * DEEP + 5, at=10 * DEEP + 9, unit="<b>", period=3, repeats=2,
        action="stop", message="m", turn=DEEP + 1,
    )  # fmt: skip
    return session, detection


@pytest.fixture
def windowed(settings):
    settings.LOOPGUARD_LAYOUT_MIN_EVENTS = 50
    return settings


def conversation_html(html: str) -> str:
    return re.search(r'<ol class="conversation">(.*?)</ol>\n</section>', html, re.S).group(1)


def shown_items(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'data-item="(\d+)"', html)]


def both_ways(settings, ask):
    """`ask()` from the stored layout, then with the session laid out whole."""
    windowed_answer = ask()
    threshold, settings.LOOPGUARD_LAYOUT_MIN_EVENTS = settings.LOOPGUARD_LAYOUT_MIN_EVENTS, WHOLE
    whole_answer = ask()
    settings.LOOPGUARD_LAYOUT_MIN_EVENTS = threshold
    return windowed_answer, whole_answer


@pytest.mark.django_db
def test_the_page_shows_the_head_and_the_window_of_a_deep_detection_as_laid_out_whole(browser_client, windowed):
    session, detection = long_session(30)

    page, whole = both_ways(windowed, lambda: browser_client.get(f"/sessions/{session.pk}/").content.decode())

    conversation = conversation_html(page)
    # The head (60 items) and 3 items either side of the content item of turn DEEP (item 4 DEEP + 2 = 102).
    assert shown_items(conversation) == [*range(60), *range(99, 106)]
    assert re.findall(r'class="item-gap" data-start="(\d+)" data-end="(\d+)"', conversation) == [
        ("60", "99"), ("106", "120"),
    ]  # fmt: skip
    assert conversation == conversation_html(whole)
    assert embedded_json(page, "session-targets") == embedded_json(whole, "session-targets")
    assert embedded_json(page, "session-targets")["detections"][str(detection.pk)]["items"] == [102, 102]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("start", "end", "shown"),
    [(0, 8, range(8)), (60, 80, range(60, 80)), (100, 120, range(100, 120)), (110, 400, range(110, 120))],
)
def test_an_item_window_holds_exactly_its_items(browser_client, windowed, start, end, shown):
    session, _ = long_session(30)
    url = f"/sessions/{session.pk}/items"

    answer, whole = both_ways(windowed, lambda: browser_client.get(url, {"start": start, "end": end}).json())

    assert (answer["start"], answer["end"]) == (shown.start, shown.stop)
    assert shown_items(answer["html"]) == list(shown)
    assert answer == whole
    # Item 4n + 1 is turn n's reasoning, 4n + 3 its tool call (a repeat of call 0 from turn 1 on).
    n = shown.start // 4 + 1
    assert f'data-start="{9 * n}" data-end="{9 * n + 9}"' in answer["html"]
    assert f">think {n:02d};</span>" in answer["html"]
    assert f"repeat of #0 · call {n + 1} with these arguments" in answer["html"]


@pytest.mark.django_db
def test_the_anchor_to_a_deep_detection_loads_the_window_holding_it(browser_client, windowed):
    session, _ = long_session(30)
    query = {"channel": "content", "offset": 10 * DEEP + 5}

    answer, whole = both_ways(windowed, lambda: browser_client.get(f"/sessions/{session.pk}/items", query).json())

    assert (answer["start"], answer["end"]) == (99, 106)
    assert answer == whole
    assert shown_items(answer["html"]) == list(range(99, 106))


@pytest.mark.django_db
def test_text_and_tool_windows_are_those_of_the_session_laid_out_whole(browser_client, windowed):
    session, detection = long_session(30)
    url = f"/sessions/{session.pk}/window"

    text, whole_text = both_ways(
        windowed,
        lambda: browser_client.get(url, {"channel": "content", "start": 245, "end": 262, "profile": "default"}).json(),
    )
    tools, whole_tools = both_ways(
        windowed,
        lambda: browser_client.get(url, {"channel": "tools", "start": 28, "end": 40, "profile": "default"}).json(),
    )

    assert text == whole_text
    assert (text["start"], text["end"]) == (245, 262)
    assert "".join(piece.get("text", "") for piece in text["items"]) == "</b>&<b>25</b>&<b"
    # The unit, then its repetition, of the region 250..255.
    assert [p["text"] for p in text["items"] if p.get("detections") == [detection.pk]] == ["<b>", "25"]
    assert tools == whole_tools
    rows = [(r["index"], r["repeat_of"], r["occurrence"], r["ok"], r["output"]) for r in tools["rows"]]
    assert rows == [(28, 0, 29, False, "<script>fail 28</script>"), (29, 0, 30, False, "<script>fail 29</script>")]


@pytest.mark.django_db
def test_transcript_text_is_escaped_in_every_window(browser_client, windowed):
    session, _ = long_session(30)

    page = browser_client.get(f"/sessions/{session.pk}/").content.decode()
    later = browser_client.get(f"/sessions/{session.pk}/items", {"start": 60, "end": 99}).json()["html"]
    deep = browser_client.get(f"/sessions/{session.pk}/items", {"channel": "tools", "offset": 29}).json()["html"]

    for html, turn in ((page, 0), (page, DEEP), (later, 20), (deep, 29)):
        # Turn DEEP's content is cut into pieces by its detection's highlights.
        content = "&lt;b&gt;</span>" if turn == DEEP else f">&lt;b&gt;{turn:02d}&lt;/b&gt;&amp;</span>"
        assert content in html
        assert f"&lt;script&gt;fail {turn}&lt;/script&gt;" in html
        assert "<script>fail" not in html and "<b>2" not in html


@pytest.mark.django_db
def test_the_timeline_summarizes_the_items_and_places_the_detection_exactly(browser_client, windowed):
    session, detection = long_session(30)

    page, whole = both_ways(windowed, lambda: browser_client.get(f"/sessions/{session.pk}/").content.decode())

    figure = embedded_json(page, "timeline-figures")["offset"]
    traces = {trace["name"]: trace for trace in figure["data"]}
    lanes = figure["layout"]["yaxis"]["categoryarray"]
    assert lanes == ["reasoning", "content", "tools", "turns", "text_loop"]
    assert lanes == embedded_json(whole, "timeline-figures")["offset"]["layout"]["yaxis"]["categoryarray"]
    # 400 bins over 600 positions: every item its own bin.
    assert traces["reasoning"]["x"] == [x for n in range(30) for x in (20 * n, 20 * n + 9, None)]
    assert traces["content"]["x"] == [x for n in range(30) for x in (20 * n + 9, 20 * n + 19, None)]
    assert traces["tool calls"]["x"] == [20 * n + 19 for n in range(30)]
    assert traces["tool calls"]["hovertext"][:2] == ["tool call #0", "tool call #1"]
    assert traces["repeated tool calls"]["x"] == [20 * n + 19 for n in range(1, 30)]
    assert traces["repeated tool calls"]["hovertext"][0] == "1 repeated tool calls here (of 1, from #1)"
    assert traces["turns"]["x"] == [20 * n for n in range(30)]
    assert traces["turns"]["customdata"][DEEP] == ["turn", DEEP + 1]
    # The content of turn DEEP starts at position 20 DEEP + 9: the region 250..255, fired at 259.
    assert traces["repeated regions"]["x"] == [509, 514, None]
    assert traces["detection: stop"]["x"] == [518]
    assert traces["detection: stop"]["customdata"] == [["detection", detection.pk]]
    assert figure["layout"]["xaxis"]["rangeslider"]["range"] == [0, 600]
    assert figure["layout"]["xaxis"]["range"] == [489, 538]  # the detection, and 20 more either side


@pytest.mark.django_db
def test_the_pages_queries_do_not_grow_with_the_session(browser_client, windowed):
    counts = []
    for turns in (30, 300):
        session, _ = long_session(turns)
        paths = [
            (f"/sessions/{session.pk}/", {}),
            (f"/sessions/{session.pk}/items", {"start": 60, "end": 99}),
            (f"/sessions/{session.pk}/items", {"channel": "content", "offset": 255}),
            (f"/sessions/{session.pk}/window", {"channel": "content", "start": 100, "end": 300}),
            (f"/sessions/{session.pk}/figure", {"axis": "offset", "x0": 100, "x1": 300}),
        ]
        browser_client.get(paths[0][0])  # a first view may bring a layout up to date
        queries = []
        for path, query in paths:
            with CaptureQueriesContext(connection) as captured:
                assert browser_client.get(path, query).status_code == 200
            queries.append(len(captured.captured_queries))
        counts.append(queries)

    assert counts[0] == counts[1]


def late_result_session(turns: int):
    """`turns` turns of 4 events and 3 items each (a turn, a tool call, then
    content written before the call's result arrives): turn n's call is item
    3n + 1, its result among the events of the content item 3n + 2."""
    events = []
    for n in range(turns):
        events += [
            {"type": "turn"},
            {"type": "tool_call", "name": "bash", "args": {"n": n}, "id": f"c{n}"},
            {"type": "content", "text": f"waiting {n:02d}"},
            {"type": "tool_result", "id": f"c{n}", "ok": n % 2 == 0, "output": f"<i>out {n}</i>"},
        ]
    return session_create_from_events(title="late", model="", source_format="events", parser_version="t", events=events)


def tool_results(html: str) -> list[tuple[str, str, str]]:
    """(index, result, output) of each tool row."""
    rows = re.findall(r'data-index="(\d+)".*?class="tool-result">([^<]*)</span>(.*?)</li>', html, re.S)
    return [(index, result, re.sub(r".*<pre class=\"tool-output\">(.*)</pre>.*", r"\1", rest, flags=re.S).strip())
            for index, result, rest in rows]  # fmt: skip


@pytest.mark.django_db
def test_a_call_whose_result_arrives_in_a_later_window_shows_it(browser_client, windowed):
    session = late_result_session(15)  # 60 events, 45 items
    url = f"/sessions/{session.pk}/items"

    # Turns 5 and 6 up to their calls: each result lies past the window's events.
    for start, end in ((15, 17), (15, 20)):
        answer, whole = both_ways(windowed, lambda: browser_client.get(url, {"start": start, "end": end}).json())  # noqa: B023

        assert answer == whole
        rows = [("5", "failed", "&lt;i&gt;out 5&lt;/i&gt;"), ("6", "ok", "&lt;i&gt;out 6&lt;/i&gt;")]
        assert tool_results(answer["html"]) == rows[: (end - start) // 2]
    tools = browser_client.get(f"/sessions/{session.pk}/window", {"channel": "tools", "start": 5, "end": 6}).json()
    assert [(r["index"], r["ok"], r["output"]) for r in tools["rows"]] == [(5, False, "<i>out 5</i>")]


@pytest.mark.django_db
def test_a_result_further_than_the_reach_says_how_far_it_was_looked_for(browser_client, windowed, monkeypatch):
    session = late_result_session(15)
    monkeypatch.setattr("loopguard_site.timeline.windows.RESULT_REACH", 1)  # the content event alone
    url = f"/sessions/{session.pk}/items"

    html = browser_client.get(url, {"start": 15, "end": 17}).json()["html"]
    monkeypatch.setattr("loopguard_site.timeline.windows.RESULT_REACH", 2)
    found = browser_client.get(url, {"start": 15, "end": 17}).json()["html"]

    assert tool_results(html) == [("5", "no result in the next 1 event", "")]
    assert tool_results(found) == [("5", "failed", "&lt;i&gt;out 5&lt;/i&gt;")]
