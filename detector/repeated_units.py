"""Short-unit loops at the character level: "思考思考思考…", "hahaha…",
"对，对，对，", "one by one by one by", ",000,000,000" — a unit of up to
`unit_max_chars` characters repeated back to back, with or without any
sentence or line boundary (the case seed 000's type 3 regular expression
targets, here checked continuously instead of once at 2,000 characters).

Every `unit_check_every` characters of the channel the finder looks at a
bounded tail window and asks whether the tail is periodic: the last few
characters are searched backwards (`str.rfind`, C speed) to propose the
smallest candidate period, and one slice comparison checks the whole
required region. A unit must cover `unit_region_chars` characters and
repeat `unit_min_copies` times and hold `unit_region_letters` letters; a unit
of one character or without any letter (digits, spaces,
punctuation, box drawing: table rules, ASCII art, zero arrays, padding)
must cover `symbol_region_chars`, since such runs are common in legitimate
output, and such a unit of whole lines, or the lines of a blank form under
`two_copy_chars` (`is_blank_form`: fields to fill in, lined paper, a
template's placeholders),
`grid_min_rows` rows;
in a fenced code block, or in text that opens as code, markup or data
(`fences.in_code`: the block finder, which sees the fences and reads the
opening, `raw_output`), a unit that is one whole line,
or one item of a list within a line (`None, `, a signature's `const
Tensor&, `, an object `{"done": false}, `), must cover
`block_region_chars`, as a line said again must in the block check: code
makes the same call a few times in a row, and writes a literal's items out;
a whole line there also needs `template_min_copies` copies, and a unit of
several lines `line_min_copies`, as in the block check (code writes data
out line by line: a board's empty rows, a menu's placeholder links; a
traceback prints a recursion's frame three times). A whole line that the
code above prints (`fences.prints`: a string literal of the latest code
lines) is that program's printout, in prose or in a code block, and
needs `table_min_copies` copies, as in the block check.
A table's cells that say the same across its row (`is_table_cell`: "| 9:00
| Work | Work | Work | Work | Work |", a CSV or TSV row's "TRUE,TRUE,")
must cover `block_region_chars`, as a line said again must.
Once fired, the finder stays quiet while the tail keeps the same period,
and may fire again after the run breaks.

A check that sees a run under way, short of what its unit needs, asks for
the next check where the run will have it if it goes on
(`_check_when_due`): a loop is caught where its evidence is complete, not
up to `unit_check_every` - 1 characters later, and whether a run that
stops right after its need fires no longer depends on where the checks
happen to fall. (A run must be `KEY_CHARS` characters past its first copy
when a check sees it, so one that starts just before a check and needs
little more than that is still found at the check after.)

When no short unit is found, the same check looks for a long one (up to
`long_unit_max_chars`): the last 32 characters searched backwards within
that distance, at most `LONG_CANDIDATES` periods tried; two copies from
`two_copy_chars` on, under it two and the evidence of a third
(`evidence_chars`, shared with the block check; `_check_long`). Once a
search of that whole distance found the key nowhere (most checks of
prose), the checks of the next `LONG_RESCAN_CHARS` characters search only
the periods shorter than the characters since that search plus the key:
a longer unit's two copies would have held that search's key.

Cost: O(1) per chunk (an append) except at a check, which costs
O(window) in C plus a few Python steps, once per `unit_check_every`
characters, and a few extra checks a run under way (in prose the long
search scans about 440 characters a check on average, not the default's
3,200). Memory: the window, 2 ×
`long_unit_max_chars` characters plus a few hundred, kept in a string
at most twice as long (cut back rarely, so a check copies no window).
"""

from __future__ import annotations

import re

from .near_duplicate import CJK, HAN_CHAR_WEIGHT
from .repeated_region import RepeatedRegion

LETTER = re.compile(r"[^\W\d_]")
KEY_CHARS = 8  # tail characters searched backwards to propose a period
# Markup whose letters are layout, not words: entities, LaTeX commands and
# environment names, HTML tags without attributes ("</div>", "<br>").
MARKUP = re.compile(r"&[a-zA-Z]+;|\\[a-zA-Z]+(?:\{[a-zA-Z*]+\})?|</?[a-zA-Z][a-zA-Z0-9]*>")
LINE_BREAK = re.compile(r"\s*\n\s*")
# One item of a list and its separator within a line, read from after the
# separator: " None,", " const Tensor&,"; or one word and a space: "1fr ".
LIST_ITEM = re.compile(r"[^\n,]+,|\S+ ")
NO_SPACE = re.compile(r"\S+")
BRACKETS = ("()", "[]", "{}")
# A blank to fill in: a run of underscores or dots (a form's field, lined
# paper, answer lines), or a placeholder in brackets naming what goes there,
# two letters at least: in square brackets a capital opens it, no word
# before it and no link after it ("[Your Name]", "[Key achievement]",
# "[姓名]"; not "[x]", "[1]", "[text](url)", code's "a[Index]" nor TikZ's
# "\draw[black]"); or in Chinese lenticular brackets ("【填写内容】"); or
# the placeholders that stand for a name or a figure, "XXX" and a date's
# "XXXX年XX月" (no Latin letter next to it: not "XXL") and "某某"
# ("so-and-so").
# Written to open with one character set, the blank's first character, each
# branch going on from it (a lookbehind says which): the search skips to the
# next such character in C instead of trying every branch at every position.
FILL_IN = re.compile(
    r"[_.…\[【Xx某]"
    r"(?:(?<=_)_{3,}|(?<=\.)\.{5,}|(?<=…)…{2,}"
    r"|(?<=\[)(?<![\w\\]\[)(?=[^\W\d_a-z])[^\[\]\n]*[^\W\d_]{2}[^\[\]\n]*\](?!\()"
    r"|(?<=【)[^【】\n]*[^\W\d_]{2}[^【】\n]*】"
    r"|(?<=X)(?<![A-Za-z]X)X+(?![A-Za-z])|(?<=x)(?<![A-Za-z]x)xx+(?![A-Za-z])|(?<=某)某)"
)
LONG_KEY_CHARS = 32  # the same for a long unit: rarer in normal text, so fewer candidates
LONG_CANDIDATES = 8  # long periods tried per check, nearest first: bounded work
# After a search of the whole long range found the long key nowhere, the
# checks of the next this many characters search only the periods that can
# still fire (see `_check`); past it the whole range again. About the
# square root of 32 × `long_unit_max_chars` / 2: least characters scanned a check.
LONG_RESCAN_CHARS = 448


def _blank(token: re.Match) -> str:
    return " " * len(token.group())


def is_list_item(unit: str) -> bool:
    r"""Whether a unit repeated back to back is one item of a list and its
    separator within a line, however it is rotated: "None, ", "e, Fals",
    "const Tensor&, "; one word and a space (CSS's "1fr 1fr 1fr"); or an
    item of commas in brackets that close, an object or a tuple and its
    comma ('{"done": false, "notes": null}, ', "(0, 0), ").

    >>> [is_list_item(u) for u in ("None, ", "e, Fals", "const Tensor&, ", " 1fr", "ATCG", "a, b, ", "a b ", "ab,\n")]
    [True, True, True, True, False, False, False, False]
    >>> [is_list_item(u) for u in ('{"a": 1, "b": 2}, ', "0), (0, ", "f(a, b, ", "{a, b}\n")]
    [True, True, False, False]
    """
    cut = unit.find(",")
    if cut < 0:
        cut = unit.find(" ")
    if cut < 0 or "\n" in unit:
        return False
    if LIST_ITEM.fullmatch(unit[cut + 1 :] + unit[: cut + 1]) is not None:
        return True
    return any(unit.count(a) == unit.count(b) > 0 for a, b in BRACKETS) and all(
        unit.count(a) == unit.count(b) for a, b in BRACKETS
    )


def is_table_cell(unit: str) -> bool:
    r"""Whether a unit repeated back to back is one cell of a table's row
    and its rule, however rotated: " | Work", "Yes | ", a row whose cells
    say the same ("| 9:00 | Work | Work | Work | Work | Work |"); or one
    field of a CSV row and its comma, with no space (",TRUE", "N/A,"; a
    list in prose puts a space after its commas: "very, very, "); or of a
    TSV row and its tab ("\tTRUE").

    >>> [is_table_cell(u) for u in (" | Work", "Yes | ", ",TRUE", "\tN/A", "|E|F|G", "a |\nb ", "very, ", "好,")]
    [True, True, True, True, False, False, False, False]
    """
    if "\n" in unit:
        return False
    if "|" in unit:
        return unit.count("|") == 1
    if "\t" in unit:
        return unit.count("\t") == 1 and NO_SPACE.fullmatch(unit.replace("\t", "")) is not None
    return unit.count(",") == 1 and unit.isascii() and NO_SPACE.fullmatch(unit) is not None


def letter_weight(text: str) -> int:
    """The letters of `text`, a Chinese character counting `HAN_CHAR_WEIGHT`
    (as in `near_duplicate`: a line in Chinese says as much as one three
    times as long in English)."""
    found = len(LETTER.findall(text))
    if found and not text.isascii():
        found += (HAN_CHAR_WEIGHT - 1) * len(CJK.findall(text))
    return found


def from_line_start(unit: str) -> str:
    r"""A unit of whole lines repeated back to back, rotated to open where
    its first line break ends ("" when it holds none): its lines whole,
    however the copy was cut ("t]\n- [Poin" is "- [Point]\n").

    >>> from_line_start("t]\n- [Poin"), from_line_start("ab")
    ('- [Point]\n', '')
    """
    cut = unit.find("\n")
    return unit[cut + 1 :] + unit[: cut + 1] if cut >= 0 else ""


def is_blank_form(unit: str, letters_per_line: int) -> bool:
    r"""Whether a unit of whole lines repeated back to back, however it is
    rotated, is the rows of a blank form: each line holds a blank to fill in
    and fewer than `letters_per_line` letters besides (`letter_weight`; a
    sign-in sheet's "Name: ____  Signature: ____", "姓名：____", lined
    paper, answer lines; a template's entries, "- [Key achievement]", "|
    [Item] | [Qty] | [Price] |"; not a sentence with a gap, "他的三个孩子分别叫____").

    >>> [is_blank_form(u, 20) for u in ("Name: ____  Date: ____\n", "re: ____\nName: ____  Signatu", "- ______\n\n")]
    [True, True, True]
    >>> [is_blank_form(u, 20) for u in ("Two of his kids are named ________\n", "Name: ____\nGuest\n", "______ _")]
    [False, False, False]
    >>> is_blank_form("姓名：____  签名：____\n", 20), is_blank_form("他的三个孩子分别叫____和____。\n", 20)
    (True, False)
    >>> [is_blank_form(u, 20) for u in ("- [Key achievement]\n", "t]\n- [Poin", "- [x] Ship it\n", "See [a](u)\n")]
    [True, True, False, False]
    """
    # (Read from a line's start: a rotation may cut a blank, "t]\n- [Poin".)
    lines = from_line_start(unit)
    if not lines or FILL_IN.search(lines) is None:
        return False
    rows = lines.split("\n")
    return all(
        FILL_IN.search(row) is not None and letter_weight(FILL_IN.sub("", row)) < letters_per_line
        for row in rows
        if row.strip()
    )


def code_copies(params, one_line: bool) -> int:
    """Copies a unit of whole lines said again word for word in a fenced code
    block needs: code writes data out line by line (a board's empty rows, a
    menu's placeholder links), so one line needs `template_min_copies`; a
    traceback prints a recursion's frame of several lines three times, so
    several lines need `line_min_copies`. (Shared by the unit and block checks.)"""
    return params.template_min_copies if one_line else params.line_min_copies


def evidence_chars(span: int, params, region: int, one_line: bool = False) -> int:
    """Characters a run of copies `span` long must cover to be a loop.

    `block_min_copies` whole copies are a loop from `two_copy_chars` on (a
    paragraph said twice). A shorter copy said twice is a slip (a list item,
    a reference), so the run must go on into a third copy: more than two
    copies, and that part must hold evidence of its own, half the copy (a
    slip's next item may open with the same words, rarely with half of
    them) up to `region` characters (what a loop of short copies must
    cover); one whole line (code and tables repeat a line now and then) up
    to `line_min_copies` whole copies. Evidence is copies times their
    length: a copy of 250 characters fires 125 characters into its third
    copy, a sentence of 60 halfway into its third (the block check also
    wants `block_region_chars` in all).

    >>> from detector.text_loop import TextLoopParams
    >>> [evidence_chars(span, TextLoopParams(), 160) for span in (40, 150, 250, 300, 500)]
    [100, 375, 625, 600, 1000]
    >>> [evidence_chars(span, TextLoopParams(), 160, one_line=True) for span in (40, 60, 100, 200)]
    [160, 240, 360, 560]
    """
    least = params.block_min_copies
    if span >= params.two_copy_chars:
        return least * span
    if one_line:
        return least * span + min((max(params.line_min_copies, least + 1) - least) * span, region)
    return least * span + min(-(-span // 2), region)


def lines_around(unit: str) -> int:
    r"""How many lines a unit repeated back to back spans: its line breaks,
    blank lines included in the break around them, read around the circle
    (a rotated row "0, 0],\n[0," is one line, as is a divider "# ---\n\n";
    an indent opening the unit is no break: "  - 1\n  - 2\n" is two lines).

    >>> lines_around("0, 0],\n[0,"), lines_around("# ---\n\n"), lines_around("a\nb\n"), lines_around("ab")
    (1, 1, 2, 0)
    >>> lines_around("  - 1\n  - 2\n"), lines_around("\n  - 1\n  - 2")
    (2, 2)
    """
    breaks = len(LINE_BREAK.findall(unit))
    if breaks > 1 and LINE_BREAK.match(unit) and unit[-1].isspace():
        breaks -= 1  # the break at the end goes on at the start
    return breaks


class ShortUnitFinder:
    """Character-level periodic-tail check over one channel's stream."""

    __slots__ = (
        "params",
        "window_chars",
        "_rescan",
        "_text",
        "pending",
        "chars_to_check",
        "_regular_at",
        "_active_period",
        "covered_until",
        "_long_clear_at",
        "_fences",
    )

    def __init__(self, params, fences=None) -> None:
        """`fences`: what says whether the stream is inside a fenced code
        block (its `in_code`: the channel's block finder); None, never."""
        self.params = params
        self._fences = fences
        most_copies = max(params.unit_min_copies, params.unit_region_letters, params.grid_min_rows)
        longest = max(
            params.unit_max_chars * most_copies,
            params.unit_region_chars,
            params.symbol_region_chars,
            3 * params.two_copy_chars,
            2 * params.long_unit_max_chars,
        )
        # The whole run must still be in the window when it is first found.
        self.window_chars = longest + params.unit_check_every + 2 * params.unit_max_chars
        # The narrowed long search holds only while a long unit needs two whole copies.
        self._rescan = LONG_RESCAN_CHARS if params.block_min_copies >= 2 else 0
        self.reset()

    def reset(self) -> None:
        self._text = ""  # the window and text before it (see _check)
        # Text since the last check; a caller may append a chunk shorter than
        # `chars_to_check` here itself (and subtract its length), for `feed`
        # would only append it.
        self.pending: list[str] = []
        self.chars_to_check = self.params.unit_check_every  # characters until the next check
        # Channel position of the next regular check: they fall every
        # `unit_check_every` characters whatever extra checks come between
        # them (`_check_when_due`), so those cost only themselves. (The first
        # check after a reset is a regular one: only a check asks for another.)
        self._regular_at = 0
        self._active_period = 0
        self.covered_until = 0  # end of the last reported loop, as far as it went on
        # Channel position of the last check whose search of the whole long
        # range found its long key nowhere (none yet: far enough back).
        self._long_clear_at = -LONG_RESCAN_CHARS

    def feed(self, text: str, offset: int) -> tuple[RepeatedRegion, ...]:
        """Append `text` (starting at channel `offset`, at most `chars_to_check`
        characters); check when it reaches the next check position."""
        self.pending.append(text)
        self.chars_to_check -= len(text)
        if self.chars_to_check:
            return ()
        position = offset + len(text)
        if position >= self._regular_at:
            self._regular_at = position + self.params.unit_check_every
        # (`_check` brings the next check nearer when a run is under way.)
        self.chars_to_check = self._regular_at - position
        region = self._check(position)
        return () if region is None else (region,)

    def flush(self, end: int) -> tuple[RepeatedRegion, ...]:
        """The stream ended (`finish`): check the tail now."""
        if not self.pending:
            return ()  # nothing since the last check
        self._regular_at = end + self.params.unit_check_every
        self.chars_to_check = self.params.unit_check_every
        region = self._check(end)
        return () if region is None else (region,)

    def _check_when_due(self, text: str, base: int, p: int, need: int) -> None:
        """A run of period `p` is under way but short of the `need` characters
        its unit needs: check again where it would have them if it goes on,
        so a loop is caught where its evidence is complete, not up to
        `unit_check_every` - 1 characters later. One slice comparison tells
        whether the run is long enough to bring the next check nearer (most
        candidates: a run of spaces, a line said twice); then its length is
        found by halving (a tail that repeats at p is periodic in each of
        its own tails), a few comparisons more, in C."""
        end = len(text)
        size = end - base
        low = need - self.chars_to_check + 1  # the least run that brings the check nearer
        if low < p:
            low = p  # (a run holds a whole copy at least)
        elif low > size or text[end - low + p :] != text[end - low : end - p]:
            return
        high = need - 1 if need - 1 < size else size
        while low < high:
            mid = (low + high + 1) // 2
            if text[end - mid + p :] == text[end - mid : end - p]:
                low = mid
            else:
                high = mid - 1
        self.chars_to_check = need - low

    def _in_code(self) -> bool:
        return self._fences is not None and self._fences.in_code

    def _printout_chars(self, unit: str) -> int:
        """Characters a run of a one-line unit that the code above prints
        must cover (0 for any other unit): a program's printout, a loop
        printing the line as often as it counts, is held to
        `table_min_copies` copies as a counted loop's printout is (as far as
        the window holds them)."""
        if self._fences is None or not self._fences.prints(unit):
            return 0
        need = self.params.table_min_copies * len(unit)
        return need if need < self.window_chars else self.window_chars

    def _required_chars(self, unit: str) -> int:
        """Characters a run of `unit` must cover to be a loop."""
        params = self.params
        # Letters of markup (`&nbsp;`, `\quad`, `</div>`) are layout, not words;
        # the unit may start inside a token ("nbsp;&"), so its letters are
        # counted in the middle of three copies, every token there whole.
        size = len(unit)
        letters = len(LETTER.findall(MARKUP.sub(_blank, unit * 3), size, 2 * size))
        rows = lines_around(unit)
        if rows and (letters == 0 or is_blank_form(unit, params.unit_region_letters)):
            # Rows of a grid or a table (an all-zero board, empty cells) or of a
            # blank form (its fields, lined paper): a few dozen rows are common.
            return max(params.symbol_region_chars, params.grid_min_rows * len(unit) // rows)
        if letters == 0 or len(unit) == 1:
            return max(params.symbol_region_chars, params.unit_min_copies * len(unit))
        # Code says a whole line again now and then (a call made four times),
        # and writes a literal's items out (`(None, None, None, None)`): in a
        # code block such a unit must cover what a block cycle of one line
        # must, as the block check asks of lines past `unit_max_chars`.
        # So do a table row's cells, when they say the same ("| Work | Work |"):
        # as a line said again, they must cover a block cycle's region.
        in_code = self._in_code()
        code = in_code and (rows == 1 or is_list_item(unit))
        region = params.block_region_chars if code or is_table_cell(unit) else params.unit_region_chars
        copies = max(
            params.unit_min_copies,
            -(-region // len(unit)),
            -(-params.unit_region_letters // letters),
            code_copies(params, rows == 1) if in_code and rows else 0,
        )
        if rows == 1:
            return max(copies * len(unit), self._printout_chars(unit))
        return copies * len(unit)

    def _check(self, position: int) -> RepeatedRegion | None:
        # The window is the last `window_chars` characters of `_text`, which is
        # grown in place and cut back only once it holds twice as many: a check
        # copies no window, it searches `_text` from `base` on.
        text = self._text
        self._text = ""  # (one reference left: `+=` may grow the string in place)
        text += "".join(self.pending)
        self.pending = []
        window = self.window_chars
        if len(text) > 2 * window:
            text = text[-window:]
        self._text = text
        end = len(text)
        # (Comparisons, not min() and max(): a builtin call costs more here.)
        size = end if end < window else window
        base = end - size
        params = self.params
        if self._active_period:
            p = self._active_period
            every = params.unit_check_every
            # Still the same loop when the text since the last check continues the period.
            if size >= every + p and text[-every:] == text[-every - p : -p]:
                self.covered_until = position
                return None
            self._active_period = 0
        if size < 2 * KEY_CHARS:
            return None
        key = text[-KEY_CHARS:]
        since = position - self._long_clear_at
        if since < self._rescan:
            # The long search is narrowed (below): a long unit's key ends with
            # this key, so when it is found at no period either search takes
            # (most checks of prose), one search settles both.
            reach = since + LONG_KEY_CHARS - 1
            if reach < params.unit_max_chars:
                reach = params.unit_max_chars
            nearest = end - KEY_CHARS - reach
            if text.rfind(key, nearest if nearest > base else base, end - 1) < 0:
                return None
        lowest = end - KEY_CHARS - params.unit_max_chars
        if lowest < base:
            lowest = base
        last = end - 1
        while True:
            found = text.rfind(key, lowest, last)
            if found < 0:
                break
            p = end - KEY_CHARS - found
            # The least run any unit of p characters needs (`_required_chars`):
            # when not even that much of the tail repeats at p, no unit can.
            least = params.unit_min_copies * p
            if least < params.unit_region_chars:
                least = params.unit_region_chars
            if least > params.symbol_region_chars:
                least = params.symbol_region_chars
            if least < p:
                least = p
            if least > size or text[end - least + p :] != text[end - least : end - p]:
                self._check_when_due(text, base, p, least)
            else:
                unit = text[-p:]
                # A unit that is itself a repeat ("ZZ") belongs to its smaller period.
                if (unit + unit).find(unit, 1) == p:
                    need = self._required_chars(unit)
                    if need <= size and text[end - need + p :] == text[end - need : end - p]:
                        return self._region(text, base, position, p)
                    self._check_when_due(text, base, p, need)
            last = found + KEY_CHARS - 1
        if size < 2 * LONG_KEY_CHARS:
            return None
        # A longer unit: its key is found nowhere in most checks of prose, so
        # the first search is made here and `_check_long` runs only after a hit.
        key = text[-LONG_KEY_CHARS:]
        lowest = end - LONG_KEY_CHARS - params.long_unit_max_chars
        if lowest < base:
            lowest = base
        stop = end - params.unit_max_chars - 1
        if since < self._rescan:
            # A long unit of p characters fires with two whole copies at least
            # (`evidence_chars`), so the tail's last 2p characters repeat at p;
            # from p >= since + LONG_KEY_CHARS on they hold the long key of the
            # check `since` characters back at p, where that check's search of
            # the whole range found it nowhere: only shorter periods are left.
            nearest = end - since - 2 * LONG_KEY_CHARS + 1
            found = text.rfind(key, nearest if nearest > lowest else lowest, stop)
        else:
            found = text.rfind(key, lowest, stop)
            if found < 0:
                self._long_clear_at = position
        return None if found < 0 else self._check_long(text, base, position, key, lowest, found)

    def _check_long(
        self, text: str, base: int, position: int, key: str, lowest: int, found: int
    ) -> RepeatedRegion | None:
        """A unit longer than `unit_max_chars`: a formula or call chain with no
        space to cut it into blocks, or a passage of more blocks than the block
        check's period limit. Under `two_copy_chars` it needs two whole
        copies and part of a third (`evidence_chars`), from there on two:
        part of a long passage said again verbatim is common in normal
        answers (a second method repeating the first one's steps, a
        translation, a quoted paragraph), so the whole second copy must be
        there. (The window is `text` from `base` on; `key`, the tail's last
        `LONG_KEY_CHARS` characters, was `found` there, no earlier than
        `lowest`.)"""
        params = self.params
        end = len(text)
        size = end - base
        for _ in range(LONG_CANDIDATES):
            if found < 0:
                return None
            p = end - LONG_KEY_CHARS - found
            # Two whole copies at least (`evidence_chars`): the characters before
            # the key's copy repeat at p too, up to 2p back. A cheap first test.
            before = found - LONG_KEY_CHARS
            if before < end - 2 * p:
                before = end - 2 * p
            if before < base or text[before:found] != text[before + p : found + p]:
                self._check_when_due(text, base, p, 2 * p)
                found = text.rfind(key, lowest, found + LONG_KEY_CHARS - 1)
                continue
            unit = text[-p:]
            if (unit * 2).find(unit, 1) < p:
                # Copies of a shorter unit ("Z" × 40): the short-unit check judges it by that unit.
                found = text.rfind(key, lowest, found + LONG_KEY_CHARS - 1)
                continue
            short = p < params.two_copy_chars
            # One whole line: code, tables and tunes repeat a line now and then.
            one_line = short and unit.count("\n") == 1
            need = evidence_chars(p, params, params.block_region_chars, one_line)
            if short and "\n" in unit and self._in_code():
                need = max(need, code_copies(params, one_line) * p)
            if one_line:
                need = max(need, self._printout_chars(unit))
            if not LETTER.search(unit) or (short and is_blank_form(unit, params.unit_region_letters)):
                need = max(need, self._required_chars(unit))
            if need <= size and text[end - need + p :] == text[end - need : end - p]:
                return self._region(text, base, position, p)
            self._check_when_due(text, base, p, need)
            found = text.rfind(key, lowest, found + LONG_KEY_CHARS - 1)
        return None

    def _region(self, text: str, base: int, position: int, p: int) -> RepeatedRegion:
        """The whole run of period `p` ending at the end of `text`, within the window from `base`."""
        end = len(text)
        start = end - p
        while start - p >= base and text[start - p : start] == text[start : start + p]:
            start -= p
        while start > base and text[start - 1] == text[start - 1 + p]:
            start -= 1
        self._active_period = p
        self.covered_until = position
        return RepeatedRegion(
            kind="short_unit",
            start=position - end + start,
            end=position,
            at=position,
            unit=text[start : start + p],
            repeats=(end - start) // p,
        )
