"""`/api/schema` (OpenAPI 3.1) describes every JSON endpoint: each URL under
/api/ is in it with the methods its view answers, each path in it resolves,
each `$ref` and path parameter is declared; the reference page renders it
with local assets only."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve

from loopguard_site.openapi import METHODS, api_schema, reference_sections, schema_text
from tests.members import member

PARAM = re.compile(r"<(?:(\w+):)?(\w+)>")


def url_routes(patterns=None, prefix: str = "") -> list[str]:
    """Every route of the URL configuration, as `/api/sessions/{pk}`."""
    routes = []
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            routes += url_routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            routes.append("/" + PARAM.sub(r"{\2}", route))
    return routes


def sample(path: str) -> str:
    """The path with a value in each parameter: `/api/sessions/1`."""
    return re.sub(r"\{(\w+)\}", lambda m: "x" if m.group(1) == "name" else "1", path)


def test_every_url_under_api_is_described():
    described = set(api_schema()["paths"])
    api_routes = {route for route in url_routes() if route.startswith("/api/")}
    assert api_routes, "the URL configuration has API routes"
    assert sorted(api_routes - described) == []


def test_every_described_path_resolves_to_a_view():
    for path in api_schema()["paths"]:
        assert resolve(sample(path)).func is not None, path


def test_refs_and_path_parameters_are_declared():
    document = api_schema()
    assert document["openapi"] == "3.1.0"
    text = str(document)
    for ref in re.findall(r"'\$ref': '#/components/(\w+)/(\w+)'", text):
        assert ref[1] in document["components"][ref[0]], ref
    for path, item in document["paths"].items():
        for method in set(item) & set(METHODS):
            operation = item[method]
            declared = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
            assert declared == set(re.findall(r"\{(\w+)\}", path)), (method, path)
            assert operation["responses"] and operation["operationId"]


@pytest.fixture
def browser(db) -> Client:
    client = Client()
    client.force_login(member(User.objects.create_user("reader")))
    return client


def test_each_api_path_answers_the_described_methods_and_refuses_the_others(browser):
    for path, item in api_schema()["paths"].items():
        if not path.startswith("/api/"):
            continue
        for method in ("get", "post", "put", "delete"):
            status = getattr(browser, method)(sample(path)).status_code
            if method in item:
                assert status != 405, (method, path)
            else:
                assert status == 405, (method, path)


def test_the_schema_is_served_as_json_to_a_signed_in_client(browser):
    assert Client().get("/api/schema").status_code == 401
    answer = browser.get("/api/schema")
    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/json"
    assert answer.json() == api_schema()


def test_the_reference_page_lists_every_operation_with_local_assets(browser):
    page = browser.get("/api-reference/").content.decode()
    document = api_schema()
    for path, item in document["paths"].items():
        for method in set(item) & set(METHODS):
            assert f'id="{item[method]["operationId"]}"' in page
            assert f"<code>{path}</code>" in page
    for asset in re.findall(r'(?:src|href)="([^"#]+)"', page):
        assert asset.startswith("/"), asset  # nothing from another host


def test_the_reference_page_needs_a_login():
    answer = Client().get("/api-reference/")
    assert answer.status_code == 302 and "/accounts/login/" in answer["Location"]


def test_schema_text_shows_a_schema_in_one_line():
    schemas = {"Detection": {"type": "object"}}
    schema = {
        "type": "object",
        "properties": {"results": {"type": "array", "items": {"$ref": "#/components/schemas/Detection"}},
                       "next": {"type": ["string", "null"]}, "kind": {"enum": ["a", "b"]}},
        "required": ["results"],
    }  # fmt: skip
    assert schema_text(schema, schemas) == '{results: [Detection], next?: string | null, kind?: "a" | "b"}'


def test_reference_sections_follow_the_tag_order():
    sections = reference_sections(api_schema())
    assert [s["tag"] for s in sections] == [t["name"] for t in api_schema()["tags"]]
    (schema_op,) = [op for s in sections for op in s["operations"] if op["path"] == "/api/schema"]
    assert (schema_op["method"], schema_op["responses"][1]["statuses"]) == ("GET", ["401", "429"])
