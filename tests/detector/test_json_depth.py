"""`json_max_depth` finds the nesting of any JSON text without parsing it:
the same depth a walk of the parsed value finds, whatever the strings hold
(quotes, backslashes and brackets escaped or not), as text or bytes, one
document or JSON Lines."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from detector.json_depth import json_depth_problem, json_max_depth

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


@settings(deadline=None, max_examples=500)
@given(VALUES, st.integers(min_value=0, max_value=4), st.booleans())
def test_a_problem_is_found_exactly_when_the_value_nests_past_the_limit(value, limit, as_bytes):
    # small limits: texts with fewer opening brackets than the limit are
    # passed on their count, the others scanned; strings full of brackets
    # make the count a loose bound
    text = json.dumps(value).encode() if as_bytes else json.dumps(value)
    problem = json_depth_problem(text, limit)
    assert (problem is not None) == (walked_depth(value) > limit)
    if problem is not None:
        assert problem.depth == limit + 1


def test_brackets_in_strings_pass_a_count_over_the_limit_when_the_nesting_is_within_it():
    text = '{"a": "[[[{{{", "b": [1]}'  # 8 opening brackets, nested 2 deep
    assert json_depth_problem(text, 2) is None
    assert json_depth_problem(text.encode(), 2) is None
    assert json_depth_problem(text, 1).path == "b"
