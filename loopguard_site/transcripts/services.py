from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import chain, count
from pathlib import PurePosixPath

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from detector.config import builtin_config
from detector.importers import FormatNotRecognised, TranscriptBlocks, TranscriptError, parse_blocks
from detector.json_depth import json_depth_problem
from loopguard_site.accounts.models import Project
from loopguard_site.accounts.services import default_project
from loopguard_site.errors import FieldError
from loopguard_site.storable import unstorable_event

from .archives import ZipLimits, is_zip, zip_members
from .event_rows import COPY_BLOCK, Row, event_blocks_insert, event_json, events_insert
from .models import RawUpload, Session, Tag
from .raw_uploads import raw_upload_create
from .selectors import scan_profile_name
from .signals import sessions_imported

TITLE_MAX = Session._meta.get_field("title").max_length
MODEL_MAX = Session._meta.get_field("model").max_length
FILENAME_MAX = RawUpload._meta.get_field("filename").max_length
TAG_MAX = Tag._meta.get_field("name").max_length


@transaction.atomic
def session_create_from_events(
    *,
    title: str,
    model: str,
    source_format: str,
    parser_version: str,
    events: Sequence[dict],
    raw: bytes | None = None,
    filename: str = "",
    uploader: AbstractBaseUser | None = None,
    project: Project | None = None,
    tags: Iterable[str] = (),
    state: str = Session.State.STORED,
    profile: str = "",
) -> Session:
    """Store a session of `project` (None: the project "default", as
    `loopguard import` without `--project`) with its events (already
    validated, in stream order) and, when given, the raw upload — all of
    it or, on any error, nothing. Who may write to which project, the callers ask
    accounts.access."""
    session = Session.objects.create(
        project=project or default_project(),
        title=title,
        model=model,
        source_format=source_format,
        parser_version=parser_version,
        uploader=uploader,
        event_count=len(events),
        state=state,
        profile=profile,
    )
    names = sorted(set(tags))
    if names:
        Tag.objects.bulk_create([Tag(name=name) for name in names], ignore_conflicts=True)
        session.tags.set(Tag.objects.filter(name__in=names))
    events_insert(session.pk, events)
    if raw is not None:
        raw_upload_create(session=session, filename=filename, raw=raw)
    return session


@dataclass(frozen=True)
class Upload:
    """One file as it arrived: its name (for messages), its size (checked
    before it is read) and how to read it."""

    name: str
    size: int
    read: Callable[[], bytes]

    @classmethod
    def from_bytes(cls, name: str, data: bytes) -> Upload:
        return cls(name, len(data), lambda: data)


@dataclass(frozen=True)
class ImportOutcome:
    """What became of one file of an upload: a stored session or an error."""

    file: str
    session: Session | None = None
    error: TranscriptError | None = None

    def line(self) -> str:
        """The outcome line the CLI prints and the upload page shows."""
        if self.session is not None:
            s = self.session
            return f"imported {self.file}: session {s.pk}, {s.event_count} events, format {s.source_format}"
        return f"error {self.error}"

    def format_named_by(self, how: str) -> ImportOutcome:
        """This outcome, its error (when the format was not recognised) telling
        to name the format with `how`: the page's or the API's own control
        rather than the command line's flag."""
        if isinstance(self.error, FormatNotRecognised):
            return replace(self, error=self.error.named_by(how))
        return self

    def error_dict(self) -> dict:
        """The API's `errors` item: `{"file", "line", "field", "message"}`."""
        error = self.error
        return {"file": error.file or self.file, "line": error.line, "field": error.field, "message": error.message}


def upload_limits() -> ZipLimits:
    """The configured limits; a zip may expand to four uploads' worth."""
    most = settings.LOOPGUARD_UPLOAD_MAX_BYTES
    return ZipLimits(member_bytes=most, total_bytes=4 * most)


def upload_size_error(size: int, filename: str) -> TranscriptError:
    most = settings.LOOPGUARD_UPLOAD_MAX_BYTES
    return TranscriptError(
        f"{size} bytes, over the upload limit of {most} bytes (LOOPGUARD_UPLOAD_MAX_MB)",
        file=filename,
    )


def session_import_file(
    *,
    data: bytes,
    filename: str,
    fmt: str = "auto",
    uploader: AbstractBaseUser | None = None,
    project: Project | None = None,
    title: str = "",
    tags: Iterable[str] = (),
    raw_name: str = "",
) -> Session:
    """Import one transcript file (not a zip) and store it with its raw bytes,
    all in one transaction; bad input raises `TranscriptError` naming
    `filename` and the line or field, and stores nothing. The raw upload
    downloads as `raw_name` (default: `filename` without its folders).

    The events are stored a block at a time as they are parsed (the
    session row once the first block tells its header), so that the
    database stores one block while the next is parsed; the session's
    header, count and model are set at the end."""
    if len(data) > settings.LOOPGUARD_UPLOAD_MAX_BYTES:
        raise upload_size_error(len(data), filename)
    if problem := json_depth_problem(data, settings.LOOPGUARD_MAX_JSON_DEPTH):
        raise TranscriptError(f"{problem} (LOOPGUARD_MAX_JSON_DEPTH)", file=filename, line=problem.line)
    transcript = parse_blocks(data, filename, fmt, COPY_BLOCK)
    basename = PurePosixPath((raw_name or filename).replace("\\", "/")).name or "upload"
    project = project or default_project()
    with transaction.atomic():
        first = next(transcript.blocks, [])
        session = session_create_from_events(
            **_header_fields(transcript, title, basename),
            source_format=transcript.format,
            parser_version=transcript.parser_version,
            events=(),
            uploader=uploader,
            project=project,
            tags=tags,
        )
        rows = _ImportRows(session.pk, chain([first], transcript.blocks), transcript.header, filename)
        event_blocks_insert(rows)
        fields = _header_fields(transcript, title, basename)
        fields.update(profile=scan_profile_name(project.pk, fields["model"]), event_count=rows.count)
        Session.objects.filter(pk=session.pk).update(**fields)
        raw_upload_create(session=session, filename=basename[:FILENAME_MAX], raw=data)
    for name, value in fields.items():
        setattr(session, name, value)
    return session


def _header_fields(transcript: TranscriptBlocks, title: str, basename: str) -> dict:
    """The session row's title and model, from what the header knows so far."""
    return {
        "title": (title or transcript.title() or PurePosixPath(basename).stem or basename)[:TITLE_MAX],
        "model": (transcript.model() or "")[:MODEL_MAX],
    }


@dataclass
class _ImportRows:
    """The rows of an import's events, a block at a time, each encoded
    once and checked for what the database cannot store as the insert
    takes it: a problem raises `TranscriptError` naming the event and the
    field mid-insert, and the import's transaction then stores nothing. The
    `session` event (seq 1) comes last, once the header is complete;
    `count` is the session's events once all are taken."""

    session_id: int
    blocks: Iterator[list[dict]]
    header: Callable[[], dict]
    filename: str
    count: int = 0

    def __iter__(self) -> Iterator[list[Row]]:
        most = settings.LOOPGUARD_MAX_EVENTS
        self.count = 1
        for block in self.blocks:
            if self.count - 1 + len(block) > most:
                counted = self.count - 1 + len(block) + sum(map(len, self.blocks))
                raise TranscriptError(
                    f"{counted} events, over the limit of {most} events per session (LOOPGUARD_MAX_EVENTS)",
                    file=self.filename,
                )
            yield self._rows(self.count + 1, block)
            self.count += len(block)
        yield self._rows(1, [self.header()])

    def _rows(self, seq: int, events: list[dict]) -> list[Row]:
        """Rows of `events`, numbered from `seq`."""
        texts = [event_json(event) for event in events]
        if problem := unstorable_event(events, "\n".join(texts)):
            number, field, what = problem
            event = seq + number - 1
            raise TranscriptError(
                f"event {event} holds {what}, which cannot be stored", file=self.filename, field=field
            )
        session = self.session_id
        return [(session, number, event["type"], text) for number, event, text in zip(count(seq), events, texts)]


def _import_outcome(data: bytes, filename: str, raw_name: str = "", **options) -> ImportOutcome:
    if is_zip(data):
        return ImportOutcome(filename, error=TranscriptError("a zip inside a zip is not expanded", file=filename))
    try:
        session = session_import_file(data=data, filename=filename, raw_name=raw_name, **options)
        return ImportOutcome(filename, session=session)
    except TranscriptError as exc:
        return ImportOutcome(filename, error=exc)


def sessions_import_upload(
    uploads: Iterable[Upload],
    *,
    fmt: str = "auto",
    uploader: AbstractBaseUser | None = None,
    project: Project | None = None,
    title: str = "",
    tags: Iterable[str] = (),
) -> list[ImportOutcome]:
    """Import every file of an upload (zips expanded), each in its own
    transaction: one outcome per file, in order; a bad file never stops the
    others. The one entry point of the upload page, the API and the CLI.
    The sessions stored are then scanned in the background, each with the
    profile its model selects (`signals.sessions_imported`, which replay
    answers)."""
    options = {"fmt": fmt, "uploader": uploader, "project": project, "title": title, "tags": list(tags)}
    outcomes = []
    for upload in uploads:
        if upload.size > settings.LOOPGUARD_UPLOAD_MAX_BYTES:
            outcomes.append(ImportOutcome(upload.name, error=upload_size_error(upload.size, upload.name)))
            continue
        try:
            data = upload.read()
        except OSError as exc:
            error = TranscriptError(f"cannot read: {exc.strerror or exc}", file=upload.name)
            outcomes.append(ImportOutcome(upload.name, error=error))
            continue
        if not is_zip(data):
            outcomes.append(_import_outcome(data, upload.name, **options))
            continue
        for name, path, member in zip_members(data, upload.name, upload_limits()):
            if isinstance(member, TranscriptError):
                outcomes.append(ImportOutcome(name, error=member))
            else:
                outcomes.append(_import_outcome(member, name, raw_name=path, **options))
    stored = [outcome.session for outcome in outcomes if outcome.session is not None]
    if stored:
        sessions_imported.send(sender=Session, sessions=stored, user=uploader)
    return outcomes


def clean_tags(values: Iterable[str]) -> list[str]:
    """Tag names from user input (each value may be comma-separated):
    stripped, deduplicated, in order; a `FieldError` (`tag`) for one too long."""
    names: list[str] = []
    for value in values:
        for name in (part.strip() for part in value.split(",")):
            if len(name) > TAG_MAX:
                raise FieldError(f"tag {name[:20]!r}... is longer than {TAG_MAX} characters", "tag")
            if name and name not in names:
                names.append(name)
    return names


def session_create_live(
    *,
    model: str = "",
    title: str = "",
    uploader: AbstractBaseUser | None = None,
    project: Project | None = None,
    tags: Iterable[str] = (),
) -> Session:
    """An empty session in state `live`, its detector profile chosen by the
    model's glob (the first built-in profile matching it, else `default`);
    events arrive later through the ingest socket."""
    return session_create_from_events(
        title=(title or f"live {model}".strip())[:TITLE_MAX],
        model=model[:MODEL_MAX],
        source_format="events",
        parser_version="",
        events=[],
        uploader=uploader,
        project=project,
        tags=tags,
        state=Session.State.LIVE,
        profile=builtin_config().select(model=model).name,
    )
