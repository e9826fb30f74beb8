"""Reads of the review app: the queue, a detection's context, reviewer
progress, agreement, disagreements and the labelled truth of sessions."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists, OuterRef, Q, QuerySet, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Length

from detector import TEXT_CHANNELS
from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.models import Event, Session

from .agreement import group_kappa
from .models import Adjudication, Label, LabelKind
from .truth import MISSED_LOOP, SESSION_ITEM, TRUE_LOOP, ItemLabels, SessionTruth, session_truth

LABEL_FILTERS = ("unlabelled", "labelled", *LabelKind.values)  # the session list's `label` filter

CONTEXT_CHARS = 300  # text shown before and after a detection's span
SPAN_CHARS = 2000  # of the span itself; a longer one is cut in the middle
CONTEXT_CALLS = 3  # tool calls shown before and after a span of calls
SIGNATURE = ("detector", "type", "channel", "start", "end", "at")


def detection_item(detection: Detection) -> str:
    """The item key of a detection: its signature (the same finding under
    another profile, or after a re-run, is the same item)."""
    return "|".join(str(getattr(detection, name)) for name in SIGNATURE)


def detection_item_of(values: dict) -> str:
    """`detection_item` of a detection given as a dict of its fields."""
    return "|".join(str(values[name]) for name in SIGNATURE)


def reviewer_labels(*, session_id: int, reviewer: AbstractBaseUser) -> dict[str, str]:
    """The reviewer's current label of each item of the session, by item key."""
    return dict(Label.objects.filter(session_id=session_id, reviewer=reviewer).values_list("item", "label"))


def item_signature(item: str) -> dict | None:
    """The signature fields of a detection item (None for the session item).

    >>> item_signature("text_loop|block|content|10|90|120")["start"]
    10
    """
    if item == SESSION_ITEM:
        return None
    values = item.split("|")
    return {
        name: int(value) if name in ("start", "end", "at") else value
        for name, value in zip(SIGNATURE, values, strict=True)
    }


def channel_length(session_id: int, channel: str) -> int:
    """Characters of a text channel, or tool calls on `tools`, in the session."""
    events = Event.objects.filter(session_id=session_id)
    if channel == "tools":
        return events.filter(type="tool_call").count()
    total = events.filter(type=channel).aggregate(n=Sum(Length(KT("data__text"))))["n"]
    return total or 0


@dataclass(frozen=True)
class QueueFilter:
    model: str = ""
    detector: str = ""
    profile: str = ""

    def as_query(self) -> dict[str, str]:
        return {key: value for key, value in vars(self).items() if value}


def review_detections(among: QuerySet[Session], queue: QueueFilter) -> QuerySet[Detection]:
    """The stored detections of the sessions of `among` (a user's:
    transcripts.selectors.sessions_visible_to) the queue's filter picks, oldest first."""
    detections = Detection.objects.select_related("session").filter(session__in=among)
    if queue.model:
        detections = detections.filter(session__model=queue.model)
    if queue.detector:
        detections = detections.filter(detector=queue.detector)
    if queue.profile:
        detections = detections.filter(profile=queue.profile)
    return detections.order_by("id")


def _labelled_by(reviewer: AbstractBaseUser) -> Exists:
    mine = Label.objects.filter(session=OuterRef("session"), reviewer=reviewer, detector=OuterRef("detector"))
    return Exists(
        mine.filter(
            detection_type=OuterRef("type"),
            channel=OuterRef("channel"),
            start=OuterRef("start"),
            end=OuterRef("end"),
            at=OuterRef("at"),
        )
    )


def queue_next(
    *, among: QuerySet[Session], reviewer: AbstractBaseUser, queue: QueueFilter, after: int = 0
) -> Detection | None:
    """The first detection after id `after` the reviewer has not labelled,
    wrapping round to the oldest; None when every one is labelled."""
    unlabelled = review_detections(among, queue).exclude(_labelled_by(reviewer))
    return unlabelled.filter(id__gt=after).first() or unlabelled.first()


def queue_neighbour(
    *, among: QuerySet[Session], queue: QueueFilter, detection_id: int, forward: bool
) -> Detection | None:
    """The next (or previous) detection of the queue, labelled or not."""
    detections = review_detections(among, queue)
    if forward:
        return detections.filter(id__gt=detection_id).first()
    return detections.filter(id__lt=detection_id).order_by("-id").first()


def detection_labels(detection: Detection) -> list[Label]:
    """Every reviewer's current label of the detection's item."""
    labels = Label.objects.filter(session_id=detection.session_id, item=detection_item(detection))
    return list(labels.select_related("reviewer").order_by("updated", "id"))


def reviewer_progress(among: QuerySet[Session], queue: QueueFilter) -> dict:
    """How many of the queue's items each reviewer has labelled."""
    items = {(s, detection_item(d)) for s, d in _signature_rows(review_detections(among, queue))}
    done: dict[str, int] = defaultdict(int)
    labels = (
        Label.objects.filter(session__in=among)
        .exclude(detector="")
        .values_list("reviewer__username", "session_id", "item")
    )
    for username, session_id, item in labels:
        if (session_id, item) in items:
            done[username] += 1
    return {"items": len(items), "reviewers": sorted(done.items())}


def _signature_rows(detections: QuerySet[Detection]) -> Iterable[tuple[int, Detection]]:
    for row in detections.only("session_id", *SIGNATURE).iterator(chunk_size=2000):
        yield row.session_id, row


def detection_context(detection: Detection) -> dict:
    """What the reviewer reads: the detection's span in its channel with some
    text (or tool calls) around it. Plain strings: the template escapes them."""
    events = Event.objects.filter(session_id=detection.session_id).order_by("seq").values_list("data", flat=True)
    if detection.channel == "tools":
        low, high = max(detection.start - CONTEXT_CALLS, 0), detection.end + CONTEXT_CALLS
        calls = events.filter(type="tool_call")
        rows = [
            {
                "index": low + i,
                "name": data["name"],
                "args": data.get("args", {}),
                "in_span": detection.start <= low + i <= detection.end,
            }
            for i, data in enumerate(calls[low : high + 1])
        ]
        return {"kind": "tools", "calls": rows}
    if detection.channel not in TEXT_CHANNELS:
        return {"kind": "none"}
    low, high = max(detection.start - CONTEXT_CHARS, 0), detection.end + CONTEXT_CHARS
    parts, offset = [], 0
    for data in events.filter(type=detection.channel).iterator(chunk_size=2000):
        text = data["text"]
        if offset + len(text) > low and offset < high:
            parts.append(text[max(low - offset, 0) : high - offset])
        offset += len(text)
        if offset >= high:
            break
    window = "".join(parts)
    start, end = detection.start - low, detection.end - low
    span = window[start:end]
    if len(span) > SPAN_CHARS:
        span = span[: SPAN_CHARS // 2] + " … " + span[-SPAN_CHARS // 2 :]
    return {"kind": "text", "before": window[:start], "span": span, "after": window[end:]}


def _item_labels(session_ids: Iterable[int] | None) -> dict[int, list[ItemLabels]]:
    labels = Label.objects.all() if session_ids is None else Label.objects.filter(session_id__in=list(session_ids))
    grouped: dict[tuple[int, str], list[Label]] = defaultdict(list)
    for label in labels.order_by("session_id", "item", "id"):
        grouped[(label.session_id, label.item)].append(label)
    adjudicated = dict(
        ((s, i), value)
        for s, i, value in Adjudication.objects.filter(session_id__in={s for s, _ in grouped}).values_list(
            "session_id", "item", "label"
        )
    )
    out: dict[int, list[ItemLabels]] = defaultdict(list)
    for (session_id, item), rows in grouped.items():
        loops = [r for r in rows if r.label in (TRUE_LOOP, MISSED_LOOP) and r.start is not None]
        # Reviewers marking a missed loop on different channels: the first reviewer's channel counts.
        channel = loops[0].channel if loops else ""
        out[session_id].append(
            ItemLabels(
                item=item,
                labels=tuple(r.label for r in rows),
                adjudicated=adjudicated.get((session_id, item)),
                channel=channel,
                starts=tuple(r.start for r in loops if r.channel == channel),
            )
        )
    return out


def session_truths(session_ids: Iterable[int] | None = None) -> dict[int, SessionTruth]:
    """The labelled truth (truth.py) of the given sessions (None: every
    session with a label); unlabelled sessions are left out."""
    return {session_id: truth for session_id, (truth, _) in labelled_session_items(session_ids).items()}


def labelled_session_items(
    session_ids: Iterable[int] | None = None,
) -> dict[int, tuple[SessionTruth, list[ItemLabels]]]:
    """The labelled sessions' truth with their labelled items (what tuning
    scores each detection by); unlabelled sessions are left out."""
    items = _item_labels(session_ids)
    detection_items: dict[int, set[str]] = defaultdict(set)
    for session_id, detection in _signature_rows(Detection.objects.filter(session_id__in=list(items))):
        detection_items[session_id].add(detection_item(detection))
    truths = {}
    for session_id, labelled in items.items():
        truth = session_truth(labelled, detection_items[session_id])
        if truth.label is not None:
            truths[session_id] = (truth, labelled)
    return truths


def _group_name(label: Label) -> str:
    return label.detector or SESSION_ITEM


def agreement_rows(among: QuerySet[Session]) -> list[dict]:
    """Agreement per detector (or "session" for session labels) and model,
    on the sessions of `among`."""
    ratings: dict[tuple[str, str], dict[tuple[int, str], dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    for label in Label.objects.filter(session__in=among).select_related("session", "reviewer"):
        group = (_group_name(label), label.session.model)
        ratings[group][(label.session_id, label.item)][label.reviewer.get_username()] = label.label
    rows = []
    for (detector, model), items in sorted(ratings.items()):
        method, kappa, used = group_kappa(items)
        reviewers = {r for labels in items.values() for r in labels}
        rows.append(
            {
                "detector": detector,
                "model": model,
                "reviewers": len(reviewers),
                "items": len(items),
                "compared": used,
                "method": method,
                "kappa": kappa,
            }
        )
    return rows


def disagreements(among: QuerySet[Session]) -> list[dict]:
    """Items of the sessions of `among` whose reviewers gave different
    labels, with any adjudication."""
    grouped: dict[tuple[int, str], list[Label]] = defaultdict(list)
    labels = Label.objects.filter(session__in=among).select_related("session", "reviewer")
    for label in labels.order_by("session_id", "item", "id"):
        grouped[(label.session_id, label.item)].append(label)
    adjudications = Adjudication.objects.filter(session__in=among).select_related("adjudicator")
    adjudicated = {(a.session_id, a.item): a for a in adjudications}
    rows = []
    for (session_id, item), labels in grouped.items():
        if len({label.label for label in labels}) < 2:
            continue
        first = labels[0]
        rows.append(
            {
                "session": first.session,
                "item": item,
                "detector": _group_name(first),
                "channel": first.channel,
                "start": first.start,
                "end": first.end,
                "labels": [(label.reviewer.get_username(), label.label, label.note) for label in labels],
                "adjudication": adjudicated.get((session_id, item)),
            }
        )
    return rows


def label_to_dict(label: Label) -> dict:
    """A label as the API answers it."""
    data = {
        "id": label.pk,
        "session": label.session_id,
        "item": label.item,
        "label": label.label,
        "note": label.note,
        "reviewer": label.reviewer.get_username(),
        "created": label.created.isoformat(),
        "updated": label.updated.isoformat(),
    }
    if label.label in (LabelKind.TRUE_LOOP, LabelKind.FALSE_POSITIVE):
        data["detection"] = label.detection_id
    elif label.label == LabelKind.MISSED_LOOP:
        data.update(channel=label.channel, start=label.start, end=label.end)
    return data


def sessions_by_label(sessions: QuerySet[Session], label: str) -> QuerySet[Session]:
    """Those of `sessions` whose reviewers' labels (of the session or its
    detections) match `label`, one of `LABEL_FILTERS` (empty means any)."""
    if not label:
        return sessions
    labels = Label.objects.filter(session=OuterRef("pk"))
    if label == "unlabelled":
        return sessions.filter(~Q(Exists(labels)))
    if label == "labelled":
        return sessions.filter(Exists(labels))
    return sessions.filter(Exists(labels.filter(label=label)))


def sessions_with_label_kinds(sessions: QuerySet[Session]) -> QuerySet[Session]:
    """`sessions`, each with `labelled_<kind>` for every `LabelKind`: a
    reviewer gave it or one of its detections that label."""
    return sessions.annotate(
        **{f"labelled_{kind}": Exists(Label.objects.filter(session=OuterRef("pk"), label=kind)) for kind in LabelKind}
    )
