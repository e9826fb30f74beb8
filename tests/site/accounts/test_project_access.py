"""Projects keep their data apart, and roles limit what a member may write.

Every URL pattern and every WebSocket route, walked from the resolvers (so a
pattern added later is checked without touching this file), is asked for
project A's objects by a user who is an admin of project B only: a pattern
with ids answers 404 (pages and API alike: an id of another project is
answered as no id at all, so nothing leaks that it exists) or 405 for a
method it does not serve, never anything of A; a socket closes with 4404.
A pattern without ids (lists, forms, creation) shows nothing of A.

Then the roles within project A: a viewer is refused every write (403), a
reviewer may label but not tune, an admin may tune."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.test import Client
from django.urls import get_resolver

from detector.config import get_profile
from loopguard_site.accounts.access import CLOSE_NOT_FOUND
from loopguard_site.accounts.models import ApiToken, Membership, Project, Role
from loopguard_site.asgi import application
from loopguard_site.celery import app as celery_app
from loopguard_site.profiles.models import TuningJob
from loopguard_site.profiles.services import profile_version_create
from loopguard_site.replay.models import ReplayJob
from loopguard_site.replay.services import replay_session
from loopguard_site.routing import websocket_urlpatterns
from loopguard_site.transcripts.services import session_import_file
from tests.members import member, project_token
from tests.site.accounts.test_anonymous_refused import ADMIN_PREFIX, PUBLIC, concrete_path, path_values, walk
from tests.site.replay.conftest import DEMO_DIR
from tests.sockets import connect_refused

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "secret-of-a"  # in every name of project A's objects; B must never see it
TOOLS_LOOP = "loop-tools-readmediafile.jsonl"
NOT_SERVED = 405  # a method the view does not take: refused before it looks at any id


@pytest.fixture
def project_a(django_user_model) -> dict:
    """Project A with one of each object a path names, and its members."""
    project = Project.objects.create(name=f"{SECRET}-project")
    owner = member(django_user_model.objects.create_user("owner"), Role.ADMIN, project)
    session = session_import_file(
        data=(DEMO_DIR / TOOLS_LOOP).read_bytes(), filename=TOOLS_LOOP, title=f"{SECRET} session",
        uploader=owner, project=project,
    )  # fmt: skip
    replay_session(session=session, profile_name="default")
    version = profile_version_create(
        profile=get_profile("default"), name=f"{SECRET}-profile", project=project, user=owner, origin="import"
    )
    return {
        "project": project,
        "project_id": project.pk,
        "owner": owner,
        "session": session.pk,
        "detection": session.detections.first().pk,
        "profile": version.name,
        "replay": ReplayJob.objects.create(project=project, created_by=owner, profiles=["default"]).pk,
        "tuning": TuningJob.objects.create(
            project=project, created_by=owner, model_glob="*", base_profile="default"
        ).pk,
        "token": project_token(user=owner, name=f"{SECRET} token", project=project)[0].pk,
    }


@pytest.fixture
def outsider(django_user_model) -> dict:
    """An admin of project B, and of nothing else: signed in, and with a token of B."""
    project = Project.objects.create(name="b")
    user = member(django_user_model.objects.create_user("outsider"), Role.ADMIN, project)
    browser = Client()
    browser.force_login(user)
    _, token = project_token(user=user, project=project)
    return {"browser": browser, "api": Client(HTTP_AUTHORIZATION=f"Bearer {token}"), "token": token}


def http_patterns(world: dict):
    """(name, path, has ids) for every URL pattern but the admin's and the public ones."""
    for route, name, pattern in walk(get_resolver().url_patterns):
        if route.startswith(ADMIN_PREFIX) or name in PUBLIC or name == "accounts:logout":
            continue
        parameters = list(pattern.pattern.converters)
        yield name, concrete_path(route, path_values(name, parameters, world)), bool(parameters)


def test_another_projects_ids_are_not_found_on_any_url(project_a, outsider):
    checked = set()
    for name, path, has_ids in http_patterns(project_a):
        clients = {"browser": outsider["browser"]}
        if path.startswith(("/api/", "/v1/")):
            clients["token"] = outsider["api"]
        for who, client in clients.items():
            answers = {method: getattr(client, method)(path) for method in ("get", "post")}
            for method, answer in answers.items():
                shown = answer.content.decode(errors="replace")
                if has_ids:  # it may echo the name the path asked for (a profile's), as it would any name
                    shown = shown.replace(project_a["profile"], "")
                assert SECRET not in shown.lower(), (name, who, method)
            statuses = {method: answer.status_code for method, answer in answers.items()}
            if has_ids:
                assert set(statuses.values()) <= {404, NOT_SERVED}, (name, who, statuses)
                assert 404 in statuses.values(), (name, who, statuses)
            else:
                # lists, forms, creation: open to B, with nothing of A in them (a 400 names
                # what the empty request lacks, a 404 the id it lacks; the proxy takes a token
                # only (401 to a browser) and has no upstream configured here (502); an empty
                # body is no OTLP export (415))
                allowed = {200, 302, 400, 401, 404, NOT_SERVED, 502} | ({415} if name == "otlp:traces" else set())
                assert set(statuses.values()) <= allowed, (name, who, statuses)
            checked.add(name)
    assert len(checked) >= 35


def test_another_projects_objects_named_in_a_body_are_refused(project_a, outsider):
    api, a = outsider["api"], project_a

    def post(path: str, body: dict):
        answer = api.post(path, body, content_type="application/json")
        return answer.status_code, answer.json()["field"]

    assert post("/api/replays", {"profiles": ["default"], "sessions": [a["session"]]}) == (400, "sessions")
    assert post("/api/replays", {"profiles": ["default"], "all": True, "project": a["project"].pk}) == (400, "project")
    assert post("/api/tuning", {"model": "*", "profile": "default", "project": a["project"].pk}) == (400, "project")
    assert post("/api/adjudications", {"session": a["session"], "item": "session", "label": "clean"})[0] == 404
    answer = api.post(f"/api/sessions?live=1&project={a['project'].pk}")
    assert (answer.status_code, answer.json()["field"]) == (400, "project")
    tokens = outsider["browser"].post("/accounts/tokens/", {"name": "x", "project": a["project"].pk})
    assert tokens.status_code == 400
    assert a["project"].sessions.count() == 1 and a["project"].api_tokens.count() == 1


async def socket_outcome(path: str, token: str, *, refused: bool) -> tuple[bool, int | None]:
    socket = WebsocketCommunicator(application, path, headers=[(b"authorization", f"Bearer {token}".encode())])
    if refused:
        return await connect_refused(socket)
    outcome = await socket.connect(timeout=10)
    await socket.disconnect()
    return outcome


def test_another_projects_ids_close_every_websocket_with_4404(project_a, outsider):
    routes = set()
    for pattern in websocket_urlpatterns:
        route = str(pattern.pattern)
        parameters = list(pattern.pattern.converters)
        # the sockets name their object by kind: sessions, replays, tuning jobs
        kind = "tuning" if route.startswith("ws/tuning") else "replay" if route.startswith("ws/replays") else "session"
        path = concrete_path(route, {p: project_a[kind] for p in parameters})
        outcome = async_to_sync(socket_outcome)(path, outsider["token"], refused=bool(parameters))
        # a route with no id (the health echo) only asks who connects
        assert outcome == ((True, CLOSE_NOT_FOUND) if parameters else (True, None)), (route, outcome)
        routes.add(route.split("/")[1])
    assert routes == {"ping", "replays", "ingest", "sessions", "tuning"}


@pytest.fixture
def role_clients(project_a, django_user_model) -> dict:
    """A token client of project A for a viewer, a reviewer and an admin of it."""
    clients = {}
    for role in (Role.VIEWER, Role.REVIEWER, Role.ADMIN):
        user = member(django_user_model.objects.create_user(f"a-{role}"), role, project_a["project"])
        _, token = project_token(user=user, project=project_a["project"])
        clients[role] = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    return clients


def test_a_viewer_reads_but_is_refused_every_write(project_a, role_clients, django_user_model):
    viewer, a = role_clients[Role.VIEWER], project_a
    assert viewer.get(f"/api/sessions/{a['session']}").status_code == 200
    assert viewer.get("/api/tuning/{}".format(a["tuning"])).status_code == 200

    def post(path: str, body: dict | None = None) -> int:
        return viewer.post(path, json.dumps(body or {}), content_type="application/json").status_code

    assert post(f"/api/detections/{a['detection']}/labels", {"label": "true_loop"}) == 403
    assert post(f"/api/sessions/{a['session']}/labels", {"label": "clean"}) == 403
    assert post("/api/tuning", {"model": "*", "profile": "default"}) == 403
    assert post(f"/api/tuning/{a['tuning']}/save", {"name": "mine"}) == 403
    assert viewer.post("/api/profiles/import", b"[profiles.x]", content_type="application/toml").status_code == 403
    assert post("/api/replays", {"profiles": ["default"], "sessions": [a["session"]]}) == 403
    assert post(f"/api/replays/{a['replay']}/cancel") == 403
    assert post(f"/api/sessions/{a['session']}/events", {"seq": 1, "events": []}) == 403
    assert viewer.post("/api/sessions?live=1").status_code == 403
    signed_in = Client()
    signed_in.force_login(django_user_model.objects.get(username="a-viewer"))
    assert signed_in.post("/accounts/tokens/", {"name": "mine"}).status_code == 403
    assert signed_in.post("/profiles/tune", {"model": "*", "profile": "default"}).status_code == 403
    assert signed_in.post(f"/accounts/tokens/{a['token']}/revoke").status_code == 403
    promote = {"username": "a-viewer", "role": "admin"}
    assert signed_in.post(f"/accounts/projects/{a['project_id']}/members", promote).status_code == 403
    assert Membership.objects.get(user__username="a-viewer").role == Role.VIEWER
    assert ApiToken.objects.get(pk=a["token"]).revoked is None
    assert not ApiToken.objects.filter(name="mine").exists()


def test_a_reviewer_labels_but_does_not_tune_and_an_admin_tunes(project_a, role_clients, monkeypatch, unconsumed_queue):
    monkeypatch.setitem(celery_app.conf, "task_default_queue", unconsumed_queue)  # the tuning job is not run here
    a = project_a
    reviewer, admin = role_clients[Role.REVIEWER], role_clients[Role.ADMIN]
    labelled = reviewer.post(
        f"/api/detections/{a['detection']}/labels", {"label": "true_loop"}, content_type="application/json"
    )
    assert labelled.status_code == 201
    tune = {"model": "*", "profile": "default"}
    assert reviewer.post("/api/tuning", tune, content_type="application/json").status_code == 403
    adjudicate = {"session": a["session"], "item": labelled.json()["item"], "label": "true_loop"}
    assert reviewer.post("/api/adjudications", adjudicate, content_type="application/json").status_code == 403
    assert admin.post("/api/adjudications", adjudicate, content_type="application/json").status_code == 201
    tuned = admin.post("/api/tuning", tune, content_type="application/json")
    assert tuned.status_code == 202
    assert TuningJob.objects.get(pk=tuned.json()["id"]).project == a["project"]


def test_a_signed_in_user_in_two_projects_names_the_project_to_write_to(project_a, outsider, django_user_model):
    both = member(django_user_model.objects.create_user("both"), Role.REVIEWER, project_a["project"])
    member(both, Role.REVIEWER, Project.objects.get(name="b"))
    browser = Client()
    browser.force_login(both)
    ambiguous = browser.post("/api/sessions?live=1")
    assert (ambiguous.status_code, ambiguous.json()["field"]) == (400, "project")
    chosen = browser.post(f"/api/sessions?live=1&project={project_a['project'].pk}")
    assert chosen.status_code == 201
    assert project_a["project"].sessions.filter(pk=chosen.json()["sessions"][0]["id"]).exists()
    listed = browser.get("/api/sessions").json()["results"]
    assert {row["title"] for row in listed} == {f"{SECRET} session", "live"}


def test_an_admin_makes_a_user_a_member_who_then_sees_the_projects_sessions(project_a, outsider):
    admin = Client()
    admin.force_login(project_a["owner"])
    members = f"/accounts/projects/{project_a['project_id']}/members"
    assert outsider["browser"].get("/api/sessions").json()["results"] == []

    assert admin.post(members, {"username": "nobody", "role": "viewer"}).content == b"username: no user 'nobody'"
    assert admin.post(members, {"username": "outsider", "role": "owner"}).status_code == 400
    assert admin.post(members, {"username": "outsider", "role": "viewer"}).status_code == 302

    assert [row["id"] for row in outsider["browser"].get("/api/sessions").json()["results"]] == [project_a["session"]]
    page = admin.get("/accounts/projects/").content.decode()
    assert "outsider</td><td>viewer" in page
    assert admin.post(members, {"username": "outsider", "role": "none"}).status_code == 302
    assert outsider["browser"].get("/api/sessions").json()["results"] == []


def test_a_project_keeps_an_admin(project_a, outsider):
    admin = Client()
    admin.force_login(project_a["owner"])
    members = f"/accounts/projects/{project_a['project_id']}/members"
    refused = f"role: owner is the last admin of {project_a['project'].name}: make another member admin first"
    for role in ("reviewer", "none"):
        answer = admin.post(members, {"username": "owner", "role": role})
        assert (answer.status_code, answer.content.decode()) == (400, refused)
    assert list(project_a["project"].memberships.values_list("user__username", "role")) == [("owner", "admin")]

    # With a second admin, the first may step down.
    assert admin.post(members, {"username": "outsider", "role": "admin"}).status_code == 302
    assert admin.post(members, {"username": "owner", "role": "viewer"}).status_code == 302
    roles = dict(project_a["project"].memberships.values_list("user__username", "role"))
    assert roles == {"owner": "viewer", "outsider": "admin"}
