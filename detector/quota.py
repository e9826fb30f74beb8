"""Daily quota per project key (seed 003, layer 5): at most `max_questions`
(50) questions and `max_explorations` (100) explorations a day; a new day
starts afresh.

Pure: the caller passes the day (a `datetime.date` or an ISO date string,
in whatever time zone it bills by), so the class needs no clock and tests
need no frozen time. Not thread-safe: one owner (the live API's service)
serialises access. Memory O(project keys).

>>> quota = DailyQuota(max_questions=2)
>>> quota.take_question("proj", "2026-11-22"), quota.take_question("proj", "2026-11-22")
(True, True)
>>> quota.take_question("proj", "2026-11-22")
False
>>> quota.take_question("proj", "2026-11-23")
True
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class QuotaInfo:
    """What is left of a project's quota on `day`."""

    day: str
    questions_remaining: int
    explorations_remaining: int


@dataclass(slots=True)
class _Usage:
    day: str
    questions: int = 0
    explorations: int = 0


def _day(day: datetime.date | str) -> str:
    if isinstance(day, datetime.date):
        return day.isoformat()
    try:
        return datetime.date.fromisoformat(day).isoformat()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"day: expected a date or an ISO date string (YYYY-MM-DD), got {day!r}") from exc


class DailyQuota:
    """Per-project daily counts of questions and explorations."""

    def __init__(self, max_questions: int = 50, max_explorations: int = 100):
        if max_questions < 0 or max_explorations < 0:
            raise ValueError("quota limits must not be negative")
        self.max_questions = max_questions
        self.max_explorations = max_explorations
        self._usage: dict[str, _Usage] = {}

    def _today(self, project: str, day: datetime.date | str) -> _Usage:
        day = _day(day)
        usage = self._usage.get(project)
        if usage is None or usage.day != day:
            usage = self._usage[project] = _Usage(day)
        return usage

    def can_ask(self, project: str, day: datetime.date | str) -> bool:
        return self._today(project, day).questions < self.max_questions

    def can_explore(self, project: str, day: datetime.date | str) -> bool:
        return self._today(project, day).explorations < self.max_explorations

    def take_question(self, project: str, day: datetime.date | str) -> bool:
        """Count one question if the quota allows it; False (nothing counted) if not."""
        usage = self._today(project, day)
        if usage.questions >= self.max_questions:
            return False
        usage.questions += 1
        return True

    def take_exploration(self, project: str, day: datetime.date | str) -> bool:
        """Count one exploration if the quota allows it; False (nothing counted) if not."""
        usage = self._today(project, day)
        if usage.explorations >= self.max_explorations:
            return False
        usage.explorations += 1
        return True

    def remaining(self, project: str, day: datetime.date | str) -> QuotaInfo:
        usage = self._today(project, day)
        return QuotaInfo(usage.day, self.max_questions - usage.questions, self.max_explorations - usage.explorations)
