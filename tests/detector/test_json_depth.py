"""`json_max_depth` finds the nesting of any JSON text without parsing it:
the same depth a walk of the parsed value finds, whatever the strings hold
(quotes, backslashes and brackets escaped or not), as text or bytes, one
document or JSON Lines."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from detector.json_depth import json_max_depth

TRICKY = st.text(alphabet='ab"\\[]{}\n\t/u', max_size=6)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TRICKY,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TRICKY, inner, max_size=3),
    max_leaves=12,
)


def walked_depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(walked_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(walked_depth, value), default=0)
    return 0


@settings(deadline=None, max_examples=500)
@given(VALUES, st.booleans())
def test_the_depth_is_the_parsed_values_depth(value, ascii_only):
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert json_max_depth(text) == json_max_depth(text.encode()) == walked_depth(value)


@settings(deadline=None, max_examples=200)
@given(st.lists(VALUES, min_size=1, max_size=4))
def test_json_lines_nest_as_deep_as_their_deepest_line(values):
    text = "\n".join(json.dumps(value) for value in values) + "\n"
    assert json_max_depth(text) == max(map(walked_depth, values))


def test_brackets_and_escapes_inside_strings_do_not_count():
    assert json_max_depth('{"a": "\\\\", "b": ["\\"]]]", "[[[\\\\"]}') == 2
    assert json_max_depth(b'["\\\\\\"{{{", {"k\\\\": [[]]}]') == 4
