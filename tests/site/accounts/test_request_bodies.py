"""Request bodies are judged by a real lab process on their headers, before
any of the body is read: an anonymous 200 MB multipart POST is answered 413
at once and does not grow the process's memory; a signed-in upload under the
limit still goes through."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.lab_server import lab  # noqa: F401 - the fixture
from tests.members import member, project_token

pytestmark = pytest.mark.django_db(transaction=True)

BIG = 200 * 1024 * 1024
BOUNDARY = "lgboundary"


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def head(host: str, path: str, length: int, extra: str = "") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
        f"Content-Length: {length}\r\n{extra}\r\n"
    ).encode()


def read_answer(connection: socket.socket) -> bytes:
    answer = b""
    connection.settimeout(30)
    while chunk := connection.recv(65536):
        answer += chunk
    return answer


def test_an_anonymous_200_mb_post_is_refused_before_its_body_is_sent(lab):  # noqa: F811
    server = lab()
    address = urlsplit(server.url)
    with socket.create_connection((address.hostname, address.port)) as connection:
        connection.sendall(head(address.netloc, "/upload/", BIG))  # the headers only: no body at all
        answer = read_answer(connection)
    status, _, body = answer.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 413 ")
    assert json.loads(body) == {
        "error": f"a request body of {BIG} bytes is over the limit of 65536 bytes without credentials: "
        "sign in or send a token",
        "field": None,
        "line": None,
    }


def test_streaming_an_anonymous_200_mb_post_does_not_grow_the_process(lab):  # noqa: F811
    server = lab()
    address = urlsplit(server.url)
    pid = server.process.pid
    before = rss_kb(pid)
    sent = 0
    part = f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="x.jsonl"\r\n\r\n'.encode()
    block = b"x" * (1024 * 1024)

    def attack() -> None:
        nonlocal sent
        with socket.create_connection((address.hostname, address.port)) as connection:
            try:
                connection.sendall(head(address.netloc, "/upload/", BIG) + part)
                while sent < BIG:
                    connection.sendall(block)
                    sent += len(block)
            except OSError:
                pass  # the server closed the connection: what it should do

    attacker = threading.Thread(target=attack)
    attacker.start()
    attacker.join(60)
    time.sleep(0.5)
    grown = rss_kb(pid) - before
    assert grown < 5 * 1024, f"the lab grew by {grown} KB"
    assert sent < BIG  # the server did not take it all


def test_a_token_upload_under_the_limit_still_imports(lab, django_user_model):  # noqa: F811
    server = lab(LOOPGUARD_ANONYMOUS_BODY_KB="1")
    _, token = project_token(user=member(django_user_model.objects.create_user("uploader")), name="t")
    lines = "".join(json.dumps({"type": "content", "text": f"line {n} "}) + "\n" for n in range(200)).encode()
    address = urlsplit(server.url)
    with socket.create_connection((address.hostname, address.port)) as connection:
        request = (
            f"POST /api/sessions?format=events HTTP/1.1\r\nHost: {address.netloc}\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/x-ndjson\r\n"
            f"Content-Length: {len(lines)}\r\nConnection: close\r\n\r\n"
        ).encode()
        connection.sendall(request + lines)
        answer = read_answer(connection)
    assert len(lines) > 1024 and answer.startswith(b"HTTP/1.1 201 "), answer[:300]
