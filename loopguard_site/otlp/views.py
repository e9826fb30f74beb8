"""`POST /v1/traces`: an OTLP/HTTP trace receiver (payload.py, services.py).
The exporter authenticates with a LoopGuard API token in `Authorization:
Bearer` (`OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20lg_...`); the
sessions go into the token's project, and each export counts against the
token's daily quota, as an API call does."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from detector.importers import Source, TranscriptError
from detector.importers.otel import document_spans
from loopguard_site.accounts.access import project_for
from loopguard_site.accounts.auth import request_token_user
from loopguard_site.accounts.models import Role
from loopguard_site.accounts.quota import QUOTA_USED_UP, request_quota_take
from loopguard_site.errors import FieldError

from .payload import JSON, PROTOBUF, OtlpError, answer_type, decompressed, error_answer, export_answer, export_document
from .services import traces_ingest


@csrf_exempt  # a bearer token, not a browser session
def traces(request: HttpRequest) -> HttpResponse:
    kind = PROTOBUF if request.content_type == PROTOBUF else JSON  # the errors' encoding, before it is checked
    try:
        # who asks comes first: an anonymous client learns nothing, not even the methods
        user = request_token_user(request)
        if user is None:
            raise OtlpError("authentication required: send 'Authorization: Bearer <LoopGuard API token>'", status=401)
        if request.method != "POST":
            raise OtlpError(f"method {request.method} is not allowed here", status=405)
        retry_after = request_quota_take(request)
        if retry_after is not None:
            raise OtlpError(QUOTA_USED_UP, status=429, retry_after=retry_after)
        try:
            project = project_for(user, None, Role.REVIEWER)
        except FieldError as exc:
            raise OtlpError(str(exc), status=exc.status) from exc
        kind = answer_type(request.content_type)
        try:
            body = request.body
        except RequestDataTooBig as exc:
            raise OtlpError(f"the body is over {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes", status=413) from exc
        data = decompressed(body, request.headers.get("Content-Encoding"), settings.LOOPGUARD_UPLOAD_MAX_BYTES)
        try:
            spans = document_spans(Source("request body", ""), export_document(data, kind))
        except TranscriptError as exc:
            raise OtlpError(str(exc)) from exc
        outcomes = traces_ingest(user=user, project=project, spans=spans)
    except OtlpError as exc:
        response = HttpResponse(error_answer(kind, str(exc), exc.status), status=exc.status, content_type=kind)
        if exc.retry_after is not None:
            response["Retry-After"] = str(exc.retry_after)
        return response
    rejected = sum(outcome.rejected for outcome in outcomes)
    message = "; ".join(_note(outcome) for outcome in outcomes if outcome.error or outcome.detections)
    answer = export_answer(
        kind, rejected=rejected, message=message, loopguard={"traces": [outcome.to_dict() for outcome in outcomes]}
    )
    return HttpResponse(answer, content_type=kind)


def _note(outcome) -> str:
    """One trace's line of the answer's message: what was refused, or the loops found."""
    where = f"trace {outcome.trace_id or '(none)'}"
    if outcome.session:
        where += f" (LoopGuard session {outcome.session})"
    if outcome.error:
        return f"{where}: {outcome.rejected} spans refused: {outcome.error}"
    loops = ", ".join(
        f"{d['action']} {d['detector']}/{d['type']} at event {d['event_seq']}" for d in outcome.detections
    )
    return f"{where}: loop detected: {loops}"
