"""Two profiles side by side on stored replay results: per session, which
detections differ and which profile fired first; over labelled sessions,
precision, recall and delay per profile (metrics.py)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import QuerySet

from loopguard_site.transcripts.models import Session

from .metrics import LabelledOutcome, ProfileMetrics, profile_metrics, session_label
from .models import Detection, ReplayRun
from .selectors import labelled_truths

# What makes two detections "the same" across profiles: the same detector
# reporting the same region at the same moment (message and action may vary
# with parameters and do not make a different finding).
SIGNATURE_FIELDS = ("detector", "type", "channel", "start", "end", "at")


@dataclass
class SessionComparison:
    session_id: int
    title: str
    label: str | None
    first: dict[str, Detection | None]  # profile -> its first detection (firing order)
    only: dict[str, list[Detection]]  # profile -> detections the other profile lacks
    common: int = 0
    earlier: str | None = None  # the profile that fired first; "same" when both at one event

    @property
    def differs(self) -> bool:
        return any(self.only.values())


@dataclass
class ProfileComparison:
    profiles: tuple[str, str]
    sessions: list[SessionComparison] = field(default_factory=list)
    not_replayed: list[int] = field(default_factory=list)  # sessions lacking a done run of either profile
    metrics: dict[str, ProfileMetrics] = field(default_factory=dict)


def _signature(detection: Detection) -> tuple:
    return tuple(getattr(detection, name) for name in SIGNATURE_FIELDS)


def _earlier(first_a: Detection | None, first_b: Detection | None, a: str, b: str) -> str | None:
    """The profile whose first detection fired at an earlier event of the stream."""
    if first_a is None or first_b is None:
        return a if first_a is not None else b if first_b is not None else None
    if first_a.event_seq == first_b.event_seq:
        return "same"
    return a if first_a.event_seq < first_b.event_seq else b


def compare_profiles(
    *, among: QuerySet[Session], session_ids: list[int] | None, profile_a: str, profile_b: str
) -> ProfileComparison:
    """Compare two profiles on the given sessions of `among` (a user's:
    transcripts.selectors.sessions_visible_to; None: every one with a finished
    replay under both)."""
    pairs = ReplayRun.objects.filter(session__in=among, profile__in=(profile_a, profile_b), state=ReplayRun.State.DONE)
    if session_ids is not None:
        pairs = pairs.filter(session_id__in=session_ids)
    replayed: dict[int, set[str]] = defaultdict(set)
    for session_id, profile in pairs.values_list("session_id", "profile").distinct():
        replayed[session_id].add(profile)
    both = sorted(s for s, profiles in replayed.items() if len(profiles) == 2)
    result = ProfileComparison(profiles=(profile_a, profile_b))
    result.not_replayed = sorted(set(session_ids or ()) - set(both))
    found: dict[tuple[int, str], list[Detection]] = defaultdict(list)
    for detection in Detection.objects.filter(session_id__in=both, profile__in=(profile_a, profile_b)).order_by(
        "session_id", "event_seq", "id"
    ):
        found[(detection.session_id, detection.profile)].append(detection)
    outcomes: dict[str, list[LabelledOutcome]] = {profile_a: [], profile_b: []}
    # reviewers' labels first; tags where there are none
    reviewed = {pk: truth.label for pk, truth in labelled_truths(both).items()}
    for session in Session.objects.filter(pk__in=both).order_by("id").prefetch_related("tags"):
        a, b = found[(session.pk, profile_a)], found[(session.pk, profile_b)]
        signatures_a, signatures_b = {_signature(d) for d in a}, {_signature(d) for d in b}
        first_a, first_b = (a[0] if a else None), (b[0] if b else None)
        comparison = SessionComparison(
            session_id=session.pk,
            title=session.title,
            label=reviewed.get(session.pk) or session_label(session.tag_names()),
            first={profile_a: first_a, profile_b: first_b},
            only={
                profile_a: [d for d in a if _signature(d) not in signatures_b],
                profile_b: [d for d in b if _signature(d) not in signatures_a],
            },
            common=len(signatures_a & signatures_b),
            earlier=_earlier(first_a, first_b, profile_a, profile_b),
        )
        result.sessions.append(comparison)
        if comparison.label is not None:
            for profile, first in comparison.first.items():
                delay = first.at - first.start if first is not None else None
                outcomes[profile].append(LabelledOutcome(comparison.label, first is not None, delay))
    result.metrics = {profile: profile_metrics(items) for profile, items in outcomes.items()}
    return result
