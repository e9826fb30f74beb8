"""Every detector family, by the name profiles use for it.

Adding a detector: write its module, then add its class here.
"""

from __future__ import annotations

from .base import Detector
from .content_chanting import ContentChanting
from .reasoning_checkpoint import ReasoningCheckpoint
from .text_loop import TextLoopDetector

DETECTOR_CLASSES: tuple[type[Detector], ...] = (ContentChanting, ReasoningCheckpoint, TextLoopDetector)

DETECTORS: dict[str, type[Detector]] = {cls.name: cls for cls in DETECTOR_CLASSES}
