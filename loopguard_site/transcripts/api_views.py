"""`/api/sessions...` as docs/api.md defines them: upload (files,
a raw body, or an empty live session), list, detail, events, raw download."""

from __future__ import annotations

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.utils.http import content_disposition_header

from detector.importers import FORMATS
from loopguard_site.accounts.access import project_for
from loopguard_site.accounts.models import Role
from loopguard_site.api import api_view, int_param
from loopguard_site.errors import FieldError

from .models import RawUpload, Session
from .raw_uploads import raw_upload_read
from .selectors import session_events, session_for
from .services import (
    ImportOutcome,
    Upload,
    clean_tags,
    session_create_live,
    sessions_import_upload,
    upload_size_error,
)

FORMAT_PARAMETER = "the format parameter (a form field or ?format=)"
EVENTS_LIMIT = 1000  # default page of events
EVENTS_LIMIT_MAX = 10_000
RAW_BODY_NAME = "upload"  # file name of a raw-body upload without ?filename=
_TRUE = ("1", "true", "yes")


def session_summary(session: Session) -> dict:
    """A session as `POST /api/sessions` answers it."""
    return {
        "id": session.pk,
        "title": session.title,
        "model": session.model,
        "format": session.source_format,
        "events": session.event_count,
    }


def _upload_options(request: HttpRequest, form: QueryDict) -> dict:
    """project, format, title and tags, from the multipart `form` fields or the query
    string. (A raw body is never parsed as a form: curl sends one as
    urlencoded, and a transcript is no form.)"""

    def value(name: str) -> str:
        return (form.get(name) or request.GET.get(name) or "").strip()

    fmt = value("format") or "auto"
    if fmt not in ("auto", *FORMATS):
        raise FieldError(f"format must be auto or one of {', '.join(FORMATS)}, not {fmt!r}", field="format")
    tags = clean_tags([*form.getlist("tag"), *request.GET.getlist("tag")])
    project = project_for(request.user, value("project"), Role.REVIEWER)
    return {"project": project, "fmt": fmt, "title": value("title"), "tags": tags}


def _raw_body_outcomes(request: HttpRequest, options: dict) -> list[ImportOutcome]:
    name = request.GET.get("filename", "").strip() or RAW_BODY_NAME
    try:
        body = request.body
    except RequestDataTooBig:
        size = int(request.headers.get("Content-Length") or 0)
        return [ImportOutcome(name, error=upload_size_error(size, name))]
    return sessions_import_upload([Upload.from_bytes(name, body)], uploader=request.user, **options)


def sessions_create(request: HttpRequest) -> JsonResponse:
    """`POST /api/sessions` (its URL is the session list's, timeline.api_views.sessions)."""
    if request.GET.get("live", "").lower() in _TRUE:
        return _live_create(request)
    if request.content_type == "multipart/form-data":
        files = request.FILES.getlist("file")
        if not files:
            raise FieldError("no file: send one or more multipart fields named 'file'", field="file")
        options = _upload_options(request, request.POST)
        uploads = [Upload(f.name, f.size, f.read) for f in files]
        outcomes = sessions_import_upload(uploads, uploader=request.user, **options)
    else:
        outcomes = _raw_body_outcomes(request, _upload_options(request, QueryDict()))
    stored = [o.session for o in outcomes if o.session is not None]
    errors = [o.format_named_by(FORMAT_PARAMETER).error_dict() for o in outcomes if o.error is not None]
    body = {"sessions": [session_summary(s) for s in stored], "errors": errors}
    if stored:
        return JsonResponse(body, status=201)
    first = next(o.error for o in outcomes if o.error is not None)
    return JsonResponse({"error": str(first), "field": first.field, "line": first.line, **body}, status=400)


def _live_create(request: HttpRequest) -> JsonResponse:
    tags = clean_tags(request.GET.getlist("tag"))
    session = session_create_live(
        model=request.GET.get("model", "").strip(),
        title=request.GET.get("title", "").strip(),
        uploader=request.user,
        project=project_for(request.user, request.GET.get("project", "").strip(), Role.REVIEWER),
        tags=tags,
    )
    return JsonResponse({"sessions": [session_summary(session)], "errors": []}, status=201)


@api_view()
def session_events_list(request: HttpRequest, pk: int) -> JsonResponse:
    session = session_for(request.user, pk)
    start = int_param(request, "from", 1, low=1)
    limit = int_param(request, "limit", EVENTS_LIMIT, low=1, high=EVENTS_LIMIT_MAX)
    events, next_seq = session_events(session, start=start, limit=limit)
    return JsonResponse({"events": events, "next": next_seq})


@api_view()
def session_raw(request: HttpRequest, pk: int) -> HttpResponse:
    """The uploaded file, byte for byte, as an attachment under its own name."""
    session_for(request.user, pk)
    raw = RawUpload.objects.filter(session_id=pk).first()
    if raw is None:
        raise FieldError(f"session {pk} has no raw upload (a live session)", status=404)
    return HttpResponse(
        raw_upload_read(raw),
        content_type="application/octet-stream",
        headers={"Content-Disposition": content_disposition_header(True, raw.filename)},
    )
