"""OTLP/HTTP trace exports as the OpenTelemetry specification defines them:
an `ExportTraceServiceRequest` in binary protobuf (`application/x-protobuf`,
the Python, Go and Java exporters) or in OTLP JSON (`application/json`, the
JavaScript exporter), either one optionally gzip- or deflate-compressed
(`Content-Encoding`). Both become the OTLP JSON document the otel importer
reads (ids as hex, as OTLP JSON writes them); answers and errors go back in
the request's encoding. Pure: bytes in, bytes out."""

from __future__ import annotations

import base64
import binascii
import json
import zlib

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
ID_FIELDS = ("traceId", "spanId", "parentSpanId")
GRPC_CODES = {400: 3, 401: 16, 403: 7, 404: 5, 405: 12, 413: 8, 415: 3, 429: 8}  # google.rpc.Code by HTTP status
WBITS = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}  # zlib's window bits per Content-Encoding


class OtlpError(Exception):
    """A request the receiver refuses, with its HTTP status."""

    def __init__(self, message: str, *, status: int = 400, retry_after: int | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def answer_type(content_type: str | None) -> str:
    """PROTOBUF or JSON: the request's encoding, which the answer uses too."""
    media = (content_type or "").split(";")[0].strip().lower()
    if media in (PROTOBUF, JSON):
        return media
    raise OtlpError(f"Content-Type must be {PROTOBUF} or {JSON}, not {media or 'missing'!r}", status=415)


def decompressed(body: bytes, encoding: str | None, limit: int) -> bytes:
    """`body` decoded per its Content-Encoding, at most `limit` bytes of it."""
    encoding = (encoding or "identity").strip().lower()
    if encoding == "identity":
        return body
    if encoding not in WBITS:
        raise OtlpError(f"Content-Encoding {encoding!r} is not supported: send gzip, deflate or none", status=415)
    inflater = zlib.decompressobj(WBITS[encoding])
    try:
        data = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise OtlpError(f"the body is not valid {encoding}: {exc}") from exc
    if len(data) > limit:
        raise OtlpError(f"the body expands past {limit} bytes (LOOPGUARD_UPLOAD_MAX_MB)", status=413)
    return data


def export_document(body: bytes, kind: str) -> dict:
    """The OTLP JSON document of an export request of encoding `kind`."""
    if kind == JSON:
        try:
            document = json.loads(body)
        except (UnicodeDecodeError, ValueError) as exc:
            raise OtlpError(f"the body is not valid JSON: {exc}") from exc
        if not isinstance(document, dict):
            raise OtlpError("the body must be an ExportTraceServiceRequest: a JSON object with resourceSpans")
        return document
    try:
        request = ExportTraceServiceRequest.FromString(body)
    except DecodeError as exc:
        raise OtlpError(f"the body is not an ExportTraceServiceRequest in protobuf: {exc}") from exc
    document = json_format.MessageToDict(request)
    for resource in document.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for name in ID_FIELDS:
                    if name in span:  # protobuf's JSON writes bytes in base64, OTLP JSON in hex
                        span[name] = _hex(span[name])
    return document


def _hex(value: str) -> str:
    try:
        return base64.b64decode(value).hex()
    except (binascii.Error, ValueError):
        return value


def export_answer(kind: str, *, rejected: int, message: str, loopguard: dict) -> bytes:
    """An ExportTraceServiceResponse: `partial_success` says what was refused
    or warns (the specification's way: rejected 0 and a message); OTLP JSON
    answers also carry `loopguard`, the sessions and their detections."""
    if kind == JSON:
        answer: dict = {"loopguard": loopguard}
        if rejected or message:
            answer["partialSuccess"] = {"rejectedSpans": rejected, "errorMessage": message}
        return json.dumps(answer).encode()
    partial = ExportTracePartialSuccess(rejected_spans=rejected, error_message=message)
    return ExportTraceServiceResponse(partial_success=partial if rejected or message else None).SerializeToString()


def error_answer(kind: str, message: str, status: int) -> bytes:
    """A google.rpc.Status, the body OTLP/HTTP gives every 4xx and 5xx."""
    code = GRPC_CODES.get(status, 2)  # 2: UNKNOWN
    if kind == JSON:
        return json.dumps({"code": code, "message": message}).encode()
    text = message.encode()
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text  # fields 1 (code) and 2 (message)


def _varint(number: int) -> bytes:
    out = bytearray()
    while True:
        byte, number = number & 0x7F, number >> 7
        out.append(byte | (0x80 if number else 0))
        if not number:
            return bytes(out)
