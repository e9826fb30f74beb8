"""The examples in the agent-loop modules' docstrings run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "module, examples",
    [
        ("detector.tool_keys", 2),
        ("detector.tool_messages", 1),
        ("detector.tool_intent", 1),
        ("detector.backoff", 3),
    ],
)
def test_docstring_examples(module, examples):
    result = doctest.testmod(importlib.import_module(module))
    assert (result.failed, result.attempted >= examples) == (0, True)
