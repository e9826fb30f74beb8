"""What every importer returns (`Transcript`) and the one error it may raise
for bad input (`TranscriptError`)."""

from __future__ import annotations

from dataclasses import dataclass, field


class TranscriptError(ValueError):
    """Input that cannot be imported. `str()` names the file, then the line or
    the field: ``chat.jsonl: line 12: invalid JSON: Expecting ',' ...``."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.field = field

    def __str__(self) -> str:
        parts = [self.file] if self.file else []
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.field:
            parts.append(f"field {self.field}")
        return ": ".join([*parts, self.message])


class FormatNotRecognised(TranscriptError):
    """The content matched none of the formats `tried`. The message tells how
    to name the format with `how`: the command line's `--format` by default;
    a web page or API says its own control with `named_by`."""

    def __init__(self, tried: tuple[str, ...], *, file: str | None = None, how: str = "--format"):
        self.tried = tuple(tried)
        self.how = how
        super().__init__(f"could not tell the format; name it with {how} (tried: {', '.join(self.tried)})", file=file)

    def named_by(self, how: str) -> FormatNotRecognised:
        return FormatNotRecognised(self.tried, file=self.file, how=how)


@dataclass
class Transcript:
    """One imported session: normalised events (the first is the `session`
    event) plus what the importer knows about it.

    `skipped` lists ``(line, record type)`` of records it kept out of the
    events on purpose (the line is None for whole-JSON files, where the
    position is given in the record type's path instead).
    """

    format: str
    parser_version: str
    events: list[dict]
    model: str | None = None
    title: str | None = None
    skipped: list[tuple[int | None, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
