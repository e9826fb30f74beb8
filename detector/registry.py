"""Every detector family, by the name profiles use for it.

Adding a detector: write its module, then add its class here.
"""

from __future__ import annotations

from .backoff import BackoffAdvice
from .base import Detector
from .content_chanting import ContentChanting
from .health import StreamHealth
from .llm_judge import LLMJudge
from .near_duplicate import NearDuplicate
from .question_dedup import QuestionDedup
from .reasoning_checkpoint import ReasoningCheckpoint
from .repeated_failure import RepeatedFailure
from .text_loop import TextLoopDetector
from .tool_dedup import ToolDedup
from .tool_intent import ToolIntent
from .tool_outcomes import ToolOutcomes
from .tool_repetition import ToolRepetition
from .truncation import Truncation

DETECTOR_CLASSES: tuple[type[Detector], ...] = (ContentChanting, ReasoningCheckpoint, TextLoopDetector, NearDuplicate)
# Agent-loop detectors (seeds 001-004).
DETECTOR_CLASSES += (ToolRepetition, ToolOutcomes, Truncation, ToolIntent)
DETECTOR_CLASSES += (ToolDedup, RepeatedFailure, BackoffAdvice, StreamHealth)
# Semantic checks (optional extras, off in every built-in profile).
DETECTOR_CLASSES += (QuestionDedup, LLMJudge)

DETECTORS: dict[str, type[Detector]] = {cls.name: cls for cls in DETECTOR_CLASSES}
