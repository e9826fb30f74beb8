"""The patterns that cut blocks and sentences and find words, written to
open with a character set so that the regular expression engine skips to
a candidate in C (`detector.text_blocks`, `detector.near_duplicate`): what
they find, on the cases their longer forms spell out."""

from __future__ import annotations

import random

from detector.near_duplicate import PROSE_SHARE, WORD, prose_tokens
from detector.text_blocks import DIGITS, STRONG_BOUNDARY, BlockCycleFinder
from detector.text_loop import TextLoopParams


def cuts(text: str) -> list[tuple[int, str]]:
    return [(m.end(), m.group()) for m in STRONG_BOUNDARY.finditer(text)]


def test_a_block_ends_at_a_newline_a_cjk_mark_or_an_ascii_mark_before_whitespace():
    text = "Costs 3,000 now, e.g.x here; then:\tno.\n好的，再来。end!"
    assert cuts(text) == [(16, ","), (28, ";"), (34, ":"), (38, "."), (39, "\n"), (42, "，"), (45, "。")]


def test_a_word_is_a_run_of_word_characters_holding_a_letter():
    # ("²" is a numeric but no decimal digit: a letter for `[^\W\d_]`.)
    words = ["test_add_0", "_x", "0abc", "½b", "²", "a_", "甲乙"]
    assert WORD.findall("0_0 test_add_0 _x 0abc ½b ² 12 a_ 甲乙") == words
    assert DIGITS.sub("0", "M16: 2023-09-01 ٣٤") == "M0: 0-0-0 0"


def test_prose_tokens_unchanged_by_digits_and_case():
    assert prose_tokens("Step 12 of the Plan: check the plan again, step 13.") == frozenset(
        {"step", "of", "the", "plan", "check", "again"}
    )


def test_a_chinese_run_is_its_bigrams_and_a_lone_chinese_character_itself():
    assert prose_tokens("好 再检查 ok") == frozenset({"好", "再检", "检查", "ok"})


def words_by_pattern(text: str) -> frozenset[str]:
    """`prose_tokens` of ASCII text by the word pattern alone (before the
    shortcut for text with no digit and no underscore)."""
    if "|" in text:
        return frozenset()
    words = WORD.findall(DIGITS.sub("0", text.lower()))
    if sum(map(len, words)) < PROSE_SHARE * (len(text) - text.count(" ")):
        return frozenset()
    return frozenset(words)


def test_ascii_prose_tokens_are_the_word_patterns_words():
    # At the prose share's edge: 3 letters of 4 visible characters are prose,
    # of 5 not (a tab is visible, as for the pattern).
    assert [prose_tokens(text) for text in ("Abc,", "Abc,,", "abc\t", "ab c.")] == [
        frozenset({"abc"}),
        frozenset(),
        frozenset({"abc"}),
        frozenset({"ab", "c"}),
    ]
    rng = random.Random(19)
    alphabet = "aZq  \t\n,.-'/_07|"
    for _ in range(20_000):
        text = "".join(rng.choices(alphabet, k=rng.randint(0, 24)))
        assert prose_tokens(text) == words_by_pattern(text), text


def test_a_mark_with_no_whitespace_after_it_is_held_like_a_word():
    """ "3,000" or "e.g.x" end no block: the chunk is only held, and the
    whitespace of the next chunk after a final comma ends the block there."""
    finder = BlockCycleFinder(TextLoopParams())
    assert finder.feed("Costs 3,000 e.g.x,", 0) == []
    assert finder.quiet_room() == 0
    finder.feed(" and more", 18)
    assert [(block[0], block[1]) for block in finder._ring] == [(0, "Costs 3,000 e.g.x,")]
