"""Every URL pattern and every WebSocket route refuses anonymous requests:
pages redirect to the login page, the API answers 401, sockets close.

The patterns are walked from the resolver, so a view added later is checked
without touching this file; path parameters are filled with real objects'
ids, so a refusal is never a 404 in disguise."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.urls import URLPattern, URLResolver, get_resolver

from detector.config import get_profile
from loopguard_site.accounts.middleware import ApiTokenAuthMiddleware
from loopguard_site.accounts.services import default_project
from loopguard_site.profiles.models import TuningJob
from loopguard_site.profiles.services import profile_version_create
from loopguard_site.replay.models import ReplayJob
from loopguard_site.replay.services import replay_session
from loopguard_site.routing import websocket_urlpatterns
from tests.members import member, project_token
from tests.site.replay.conftest import store_demo
from tests.sockets import connect_refused

# Open to anyone, on purpose: the login page itself, and Django's admin, which
# sends anonymous visitors to its own login page (checked below).
PUBLIC = {"accounts:login"}
ADMIN_PREFIX = "admin/"


def walk(patterns, prefix: str = "", namespace: str = ""):
    """(route, full name, pattern) for every URL pattern, nested ones included."""
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            yield from walk(pattern.url_patterns, route, inner)
        elif isinstance(pattern, URLPattern):
            yield route, f"{namespace}{pattern.name}", pattern


@pytest.fixture
def world(django_user_model):
    """One of each object a path names."""
    owner = member(django_user_model.objects.create_user("owner"))
    session = store_demo("loop-tools-readmediafile.jsonl")
    replay_session(session=session, profile_name="default")
    version = profile_version_create(
        project=default_project(), profile=get_profile("default"), name="stored", user=owner, origin="import"
    )
    return {
        "project_id": session.project_id,
        "session": session.pk,
        "detection": session.detections.first().pk,
        "profile": version.name,
        "replay": ReplayJob.objects.create(project=default_project(), created_by=owner, profiles=["default"]).pk,
        "tuning": TuningJob.objects.create(
            project=default_project(), created_by=owner, model_glob="*", base_profile="default"
        ).pk,
        "token": project_token(user=owner, name="owner's")[0].pk,
    }


def path_values(name: str, parameters: list[str], world: dict) -> dict:
    values = {}
    for parameter in parameters:
        if parameter in ("pk", "session_id"):
            values[parameter] = world["session"]
        elif parameter == "detection_id":
            values[parameter] = world["detection"]
        elif parameter == "token_id":
            values[parameter] = world["token"]
        elif parameter == "project_id":
            values[parameter] = world["project_id"]
        elif parameter == "name":
            values[parameter] = world["profile"]
        elif parameter == "job_id":
            values[parameter] = world["tuning"] if name.startswith("profiles:") else world["replay"]
        else:
            raise AssertionError(f"{name}: no object for path parameter {parameter!r}; add one to `world`")
    return values


def concrete_path(route: str, values: dict) -> str:
    """A route like `api/sessions/<int:pk>` with its parameters filled in."""
    for parameter, value in values.items():
        for converter in ("int", "str", "slug", "path", "uuid", ""):
            token = f"<{converter}:{parameter}>" if converter else f"<{parameter}>"
            route = route.replace(token, str(value))
    assert "<" not in route, route
    return "/" + route


def http_cases(world: dict):
    for route, name, pattern in walk(get_resolver().url_patterns):
        if route.startswith(ADMIN_PREFIX) or name in PUBLIC:
            continue
        parameters = list(pattern.pattern.converters)
        yield name, concrete_path(route, path_values(name, parameters, world))


def test_the_walk_finds_every_app(world):
    names = {name.split(":")[0] for name, _ in http_cases(world)}
    assert names == {
        "live",
        "transcripts",
        "replay",
        "review",
        "profiles",
        "timeline",
        "proxy",
        "accounts",
        "overview",
        "api",
        "otlp",
    }


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["get", "post"])
def test_it_refuses_anonymous_requests_to_every_url(client, world, method):
    checked = 0
    for name, path in http_cases(world):
        response = getattr(client, method)(path)
        if path.startswith(("/api/", "/v1/")):
            # an API view refuses before it looks at the method
            assert response.status_code in (401, 405), (name, path, response.status_code)
            if response.status_code == 405:
                assert method == "get" and name.startswith("proxy:"), (name, path)
            elif name == "otlp:traces":
                assert "message" in json.loads(response.content), (name, path)  # OTLP's google.rpc.Status
            else:
                assert "error" in json.loads(response.content), (name, path)
        elif name == "accounts:logout":
            # logging out an anonymous visitor changes nothing; it lands on the login page
            assert response.status_code in (302, 405), (name, path, response.status_code)
        else:
            assert response.status_code == 302, (name, path, method, response.status_code)
            assert response["Location"].startswith("/accounts/login/?next="), (name, path)
        checked += 1
    assert checked >= 30


def test_the_admin_sends_anonymous_visitors_to_its_login(client, db):
    response = client.get("/admin/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_the_login_page_is_open(client, db):
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert 'name="csrfmiddlewaretoken"' in response.content.decode()


def websocket_paths(world: dict) -> list[str]:
    paths = []
    for pattern in websocket_urlpatterns:
        route = str(pattern.pattern)
        values = {p: world["tuning"] if route.startswith("ws/tuning") else world["replay"] if "replays" in route
                  else world["session"] for p in pattern.pattern.converters}  # fmt: skip
        paths.append(concrete_path(route, values))
    return paths


async def anonymous_connect(path: str) -> tuple[bool, int | None]:
    """(accepted, close code) of an anonymous client's socket on `path`,
    through the token middleware as in asgi.py (the session middleware found nobody)."""
    application = ApiTokenAuthMiddleware(URLRouter(websocket_urlpatterns))
    communicator = WebsocketCommunicator(application, path)
    communicator.scope["user"] = AnonymousUser()
    return await connect_refused(communicator)


@pytest.mark.django_db(transaction=True)
def test_every_websocket_route_refuses_anonymous_clients(world):
    paths = websocket_paths(world)
    assert {p.split("/")[2] for p in paths} == {"ping", "replays", "ingest", "sessions", "tuning"}
    for path in paths:
        assert async_to_sync(anonymous_connect)(path) == (True, 4401), path  # accepted, then closed: not signed in
        assert async_to_sync(anonymous_connect)(path + "?token=lg_not-a-token") == (True, 4401), path
