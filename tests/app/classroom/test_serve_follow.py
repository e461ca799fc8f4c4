"""`attnlens serve` serves the follow route beside the app (app/web/served.py): on the address
--host names, with Streamlit's own routes as before."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.stores import open_store
from helpers.server import free_port, running, serve_command


def fetch(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=60) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def test_serve_answers_the_follow_route_beside_the_app(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.sqlite3'}"
    store = open_store(url)
    code = store.create(ClassState("section3", 2)).code
    store.close()  # the server's store is the only one open while it runs
    port = free_port()
    command = [*serve_command("reverse", port), "--host", "127.0.0.1", "--class-store", url]
    with running(command, port) as served:
        status, body = fetch(f"{served}/_attnlens/follow/{code}?after=-1")
        assert (status, json.loads(body)) == (200, {"version": 0, "changed": True})
        assert fetch(f"{served}/_attnlens/follow/ABCDEF?after=0")[0] == 404
        assert fetch(f"{served}/_attnlens/follow/{code.lower()}?after=0")[0] == 400
        status, page = fetch(f"{served}/?class={code}")
        assert status == 200 and b"<html" in page.lower()  # the app, as before
        assert fetch(f"{served}/_stcore/health")[0] == 200
