"""The JSON API's OpenAPI 3.1 description and its reference page.

The description is written by hand, as data, in `openapi.json` beside this
module: every JSON endpoint (`/api/...`, the session page's data calls and
the OpenAI-compatible proxy). `/api/schema` serves it as it is; the API
reference page renders it with our own template and CSS (no CDN, no
client-side viewer). tests/site/foundation/test_openapi.py checks that
every URL under /api/ is described and that every described path resolves.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import path as url_path
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from loopguard_site.api import api_view

SCHEMA_FILE = Path(__file__).with_name("openapi.json")
METHODS = ("get", "post", "put", "patch", "delete")


@functools.cache
def api_schema() -> dict:
    """The OpenAPI document (read once per process)."""
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def schema_text(schema: dict, schemas: dict, depth: int = 0) -> str:
    """A JSON schema in one line, as the reference page shows it:
    `{id: integer, next: string | null}`, `[Detection]`; a `$ref` is the
    component's name."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[1]
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return " | ".join(json.dumps(value) for value in schema["enum"])
    for key, joiner in (("oneOf", " | "), ("anyOf", " | "), ("allOf", " & ")):
        if key in schema:
            return joiner.join(schema_text(part, schemas, depth) for part in schema[key])
    kind = schema.get("type")
    if kind == "array":
        return f"[{schema_text(schema.get('items', {}), schemas, depth)}]"
    if kind == "object" and schema.get("properties") and depth < 2:
        required = set(schema.get("required", ()))
        fields = (
            f"{name}{'' if name in required else '?'}: {schema_text(value, schemas, depth + 1)}"
            for name, value in schema["properties"].items()
        )
        return "{" + ", ".join(fields) + "}"
    if isinstance(kind, list):
        return " | ".join(kind)
    return kind or "any"


def reference_sections(document: dict) -> list[dict]:
    """The operations grouped by tag, in the document's tag order, each
    with its parameters, request body and responses as the page lists them."""
    schemas = document.get("components", {}).get("schemas", {})
    shared_responses = document.get("components", {}).get("responses", {})
    sections = {tag["name"]: [] for tag in document.get("tags", [])}
    for path, item in document["paths"].items():
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            body = operation.get("requestBody", {}).get("content", {})
            # Statuses with the same answer (the error body, mostly) share one line.
            responses: dict[tuple, dict] = {}
            for status, response in operation.get("responses", {}).items():
                if "$ref" in response:
                    response = shared_responses[response["$ref"].rsplit("/", 1)[1]]
                content = response.get("content", {})
                shown = [(kind, schema_text(c.get("schema", {}), schemas)) for kind, c in content.items()]
                key = (response.get("description", ""), tuple(shown))
                responses.setdefault(key, {"statuses": [], "description": key[0], "content": shown})
                responses[key]["statuses"].append(status)
            sections.setdefault((operation.get("tags") or ["Other"])[0], []).append(
                {
                    "id": operation.get("operationId", f"{method}-{path}"),
                    "method": method.upper(),
                    "path": path,
                    "summary": operation.get("summary", ""),
                    "description": operation.get("description", ""),
                    "parameters": [
                        {
                            "name": p["name"],
                            "in": p["in"],
                            "required": p.get("required", False),
                            "type": schema_text(p.get("schema", {}), schemas),
                            "description": p.get("description", ""),
                        }
                        for p in operation.get("parameters", [])
                    ],
                    "body": [(kind, schema_text(c.get("schema", {}), schemas)) for kind, c in body.items()],
                    "responses": list(responses.values()),
                }
            )
    return [{"tag": tag, "operations": operations} for tag, operations in sections.items() if operations]


def inline_code(text: str) -> str:
    """`text` escaped, with its `backquoted` parts as <code>."""
    parts = str(escape(text)).split("`")
    return mark_safe("".join(f"<code>{part}</code>" if i % 2 else part for i, part in enumerate(parts)))  # noqa: S308


@api_view(("GET",))
def schema(request: HttpRequest) -> JsonResponse:
    return JsonResponse(api_schema(), json_dumps_params={"ensure_ascii": False})


@login_required
@require_GET
def reference(request: HttpRequest) -> HttpResponse:
    document = api_schema()
    schemas = document["components"]["schemas"]
    components = [(name, schema_text(value, schemas)) for name, value in schemas.items()]
    sections = reference_sections(document)
    for operation in (op for section in sections for op in section["operations"]):
        operation["summary"] = inline_code(operation["summary"])
        operation["description"] = inline_code(operation["description"])
        for parameter in operation["parameters"]:
            parameter["description"] = inline_code(parameter["description"])
    info = {**document["info"], "description": inline_code(document["info"]["description"])}
    context = {"info": info, "sections": sections, "components": components}
    return render(request, "api/reference.html", context)


# Included by loopguard_site/urls.py under the namespace "api".
urlpatterns = [
    url_path("api/schema", schema, name="schema"),
    url_path("api-reference/", reference, name="reference"),
]
