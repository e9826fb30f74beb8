"""The review pages through the test client: the queue (filters, order,
neighbours, progress, escaping) and agreement with adjudication."""

from __future__ import annotations

import re

import pytest
from django.utils.html import escape

from detector.registry import DETECTORS
from loopguard_site.replay.selectors import profile_names
from loopguard_site.replay.services import replay_session
from loopguard_site.review.models import Adjudication
from loopguard_site.review.services import label_detection_set
from loopguard_site.transcripts.selectors import sessions_visible_to
from loopguard_site.transcripts.services import session_create_from_events

from .conftest import REASONING_LOOP, TOOLS_LOOP, replayed

HOSTILE = "<script>alert(1)</script>\n"


def shown_detection(html: str) -> int | None:
    match = re.search(r"<h2>Detection (\d+) ", html)
    return int(match.group(1)) if match else None


@pytest.mark.django_db
def test_the_queue_shows_the_next_unlabelled_detection_of_the_filter_and_its_neighbours(client, ann):
    tools = replayed(TOOLS_LOOP)
    ids = list(tools.detections.filter(detector="tool_outcomes").order_by("id").values_list("id", flat=True))
    client.force_login(ann)

    assert shown_detection(client.get("/review/?detector=tool_outcomes").content.decode()) == ids[0]
    label_detection_set(detection=tools.detections.get(pk=ids[0]), reviewer=ann, label="true_loop")
    html = client.get("/review/?detector=tool_outcomes").content.decode()

    assert shown_detection(html) == ids[1]
    assert f'data-next-url="/review/?detector=tool_outcomes&amp;after={ids[1]}"' in html
    assert f'data-following-url="/review/?detector=tool_outcomes&amp;detection={ids[2]}"' in html
    assert f'data-previous-url="/review/?detector=tool_outcomes&amp;detection={ids[0]}"' in html
    assert '<span class="reviewer-progress">ann: 1/3</span>' in html
    # skipping past the last one wraps round to the first unlabelled one
    assert shown_detection(client.get(f"/review/?detector=tool_outcomes&after={ids[2]}").content.decode()) == ids[1]
    assert shown_detection(client.get("/review/?detector=tool_outcomes&model=other").content.decode()) is None
    assert shown_detection(client.get("/review/?profile=gemini").content.decode()) is None


def menu(html: str, name: str) -> list[tuple[str, bool]]:
    """The options of the select `name`: (value, selected)."""
    select = re.search(rf'<select name="{name}">(.*?)</select>', html, re.S).group(1)
    return [(value, bool(chosen)) for value, chosen in re.findall(r'<option value="([^"]*)"( selected)?>', select)]


@pytest.mark.django_db
def test_the_queues_filters_are_menus_of_the_models_detectors_and_profiles_there_are(client, ann):
    replayed(TOOLS_LOOP)
    session_create_from_events(
        title="another model", model="<m2>", source_format="events", parser_version="", events=[]
    )
    client.force_login(ann)
    html = client.get("/review/?detector=tool_outcomes&profile=gemini").content.decode()

    models = sorted(set(sessions_visible_to(ann).values_list("model", flat=True)))
    assert "<m2>" in models
    assert menu(html, "model") == [("", False)] + [(escape(model), False) for model in models]
    assert menu(html, "detector") == [("", False)] + [(name, name == "tool_outcomes") for name in sorted(DETECTORS)]
    assert menu(html, "profile") == [("", False)] + [(name, name == "gemini") for name in profile_names()]
    assert "<m2>" not in html


@pytest.mark.django_db
def test_the_queue_escapes_the_transcript_text(client, ann):
    session = session_create_from_events(
        title="<i>t</i>",
        model="m",
        source_format="events",
        parser_version="",
        events=[{"type": "content", "text": HOSTILE}] * 12,
    )
    replay_session(session=session, profile_name="default")
    client.force_login(ann)
    html = client.get("/review/").content.decode()
    assert "<script>alert" not in html and "<i>t</i>" not in html
    (detection,) = session.detections.all()
    assert (detection.start, detection.end) == (0, 4 * len(HOSTILE))  # a short line's fourth copy
    assert f'<mark class="detection-span">{escape((HOSTILE * 12)[:104])}</mark>' in html


@pytest.mark.django_db
def test_the_queue_needs_a_login(client):
    assert client.get("/review/").status_code == 302


@pytest.mark.django_db
def test_agreement_page_lists_disagreements_and_an_admin_adjudicates(client, ann, bob, admin):
    (detection,) = replayed(REASONING_LOOP).detections.all()
    label_detection_set(detection=detection, reviewer=ann, label="true_loop")
    client.force_login(bob)
    alone = client.get("/review/agreement").content.decode()
    assert "No item has a second reviewer yet" in alone
    assert '<td class="num">0</td><td>—</td>' in alone  # nothing compared, no method
    label_detection_set(detection=detection, reviewer=bob, label="false_positive", note="<b>list</b>")
    html = client.get("/review/agreement").content.decode()
    assert "No item has a second reviewer yet" not in html
    assert "<td>text_loop</td><td>DeepSeek-R1-Distill-Qwen-1.5B</td>" in html
    assert '<td class="num">1</td><td>Cohen\'s</td><td class="num">' in html
    assert "bob: <strong>false positive</strong> — &lt;b&gt;list&lt;/b&gt;" in html
    assert 'action="/review/adjudicate"' not in html
    item = "text_loop|short_unit|reasoning|1654|2510|2510"
    form = {"session": detection.session_id, "item": item, "label": "true_loop"}
    assert client.post("/review/adjudicate", form).status_code == 403

    client.force_login(admin)
    assert 'action="/review/adjudicate"' in client.get("/review/agreement").content.decode()
    assert client.post("/review/adjudicate", form).status_code == 302
    assert Adjudication.objects.get().label == "true_loop"
    assert "<strong>true loop</strong> (root)" in client.get("/review/agreement").content.decode()
