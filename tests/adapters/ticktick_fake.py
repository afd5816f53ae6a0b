"""A fake TickTick open API, seeded from JSON fixtures written from the documented shapes.

``FakeTickTick.handle`` answers an ``httpx.Request`` as api.ticktick.com/open/v1 does (the
routes the adapter uses, with the documented request and response bodies); ``transport`` is an
``httpx.MockTransport`` over it, and ``serve()`` a local HTTP server over it for tests that go
through the CLI, REST or MCP (which build their own clients). Every request is recorded in
``requests``; ``throttle`` holds Retry-After values of 429 answers to give first; a wrong
token is 401.
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import httpx

FIXTURES = Path(__file__).parent / "fixtures" / "ticktick"
TOKEN = "tt-fixture-token"
INBOX_ID = "inbox1014"


def _time(value: str) -> dt.datetime:
    for layout in ("%Y-%m-%dT%H:%M:%S.%f%z", "%Y-%m-%dT%H:%M:%S%z"):
        try:
            return dt.datetime.strptime(value, layout)
        except ValueError:
            continue
    raise ValueError(value)


class FakeTickTick:
    """The account of the fixtures, behind the open API's routes."""

    def __init__(self, page_size: int = 200, token: str = TOKEN):
        self.projects = json.loads((FIXTURES / "projects.json").read_text())
        self.tasks = {t["id"]: t for t in json.loads((FIXTURES / "tasks.json").read_text())}
        self.page_size = page_size
        self.token = token
        self.requests: list[tuple[str, str, object]] = []
        self.throttle: list[str] = []
        self.lock = threading.Lock()
        self._new_ids = (f"64{n:022x}" for n in itertools.count(1))

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def calls(self, method: str | None = None, path: str | None = None) -> int:
        """How many requests (of that method and path) were answered."""
        return sum(1 for m, p, _ in self.requests
                   if (method is None or m == method) and (path is None or p == path))

    def delete(self, task_id: str) -> None:
        """Delete a task in the app, as a person would on their phone."""
        del self.tasks[task_id]

    def handle(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            body = json.loads(request.content) if request.content else None
            path = request.url.path.removeprefix("/open/v1")
            self.requests.append((request.method, path, body))
            if request.headers.get("authorization") != f"Bearer {self.token}":
                return httpx.Response(401)
            if self.throttle:
                return httpx.Response(429, headers={"Retry-After": self.throttle.pop(0)})
            return self._route(request.method, path.strip("/").split("/"), body)

    def _route(self, method: str, parts: list[str], body: object) -> httpx.Response:
        if method == "GET" and parts == ["project"]:
            return httpx.Response(200, json=self.projects)
        if method == "GET" and len(parts) == 3 and parts[0] == "project" and parts[2] == "data":
            return self._data(parts[1])
        if method == "GET" and len(parts) == 4 and parts[0] == "project" and parts[2] == "task":
            task = self.tasks.get(parts[3])
            if task is None or task["projectId"] != parts[1]:
                return httpx.Response(404)
            return httpx.Response(200, json=task)
        if method == "POST" and parts == ["task", "filter"]:
            wanted = set(body.get("projectIds") or ())
            statuses = set(body.get("status") or (0, 2))
            found = [t for t in self.tasks.values()
                     if (not wanted or t["projectId"] in wanted) and t["status"] in statuses]
            return httpx.Response(200, json=found[:self.page_size])
        if method == "POST" and parts == ["task", "completed"]:
            return self._completed(body)
        if method == "POST" and parts == ["task"]:
            task = {"id": next(self._new_ids), "projectId": body.get("projectId") or INBOX_ID,
                    "title": body["title"], "content": body.get("content", ""),
                    "isAllDay": False, "priority": 0, "status": 0, "sortOrder": 0, "tags": [],
                    "etag": "n1b2c3d4", "kind": "TEXT",
                    "modifiedTime": "2026-12-01T10:00:00.000+0000"}
            self.tasks[task["id"]] = task
            return httpx.Response(200, json=task)
        if method == "POST" and len(parts) == 2 and parts[0] == "task":
            task = self.tasks.get(parts[1])
            if task is None:
                return httpx.Response(404)
            if body.get("id") != parts[1] or body.get("projectId") != task["projectId"]:
                return httpx.Response(400, json={"errorMessage": "id and projectId required"})
            task.update({k: v for k, v in body.items() if k in ("title", "content")})
            task["modifiedTime"] = "2026-12-01T10:05:00.000+0000"
            return httpx.Response(200, json=task)
        return httpx.Response(404)

    def _data(self, project_id: str) -> httpx.Response:
        if project_id == "inbox":
            tasks = [t for t in self.tasks.values() if t["projectId"] == INBOX_ID]
            return httpx.Response(200, json={"tasks": [t for t in tasks if t["status"] == 0],
                                             "columns": []})
        project = next((p for p in self.projects if p["id"] == project_id), None)
        if project is None:
            return httpx.Response(404)
        tasks = [t for t in self.tasks.values()
                 if t["projectId"] == project_id and t["status"] == 0]
        return httpx.Response(200, json={"project": project, "tasks": tasks, "columns": []})

    def _completed(self, body: dict) -> httpx.Response:
        wanted = set(body.get("projectIds") or ())
        start = _time(body["startDate"]) if body.get("startDate") else None
        end = _time(body["endDate"]) if body.get("endDate") else None
        found = [t for t in self.tasks.values() if t["status"] == 2
                 and (not wanted or t["projectId"] in wanted)
                 and (start is None or _time(t["completedTime"]) >= start)
                 and (end is None or _time(t["completedTime"]) <= end)]
        found.sort(key=lambda t: _time(t["completedTime"]), reverse=True)
        return httpx.Response(200, json=copy.deepcopy(found[:self.page_size]))

    @contextlib.contextmanager
    def serve(self) -> Iterator[str]:
        """A local HTTP server over ``handle``; yields its base URL (…/open/v1)."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = httpx.Request(self.command, f"http://fake{self.path}",
                                        headers=dict(self.headers),
                                        content=self.rfile.read(length) if length else b"")
                response = fake.handle(request)
                self.send_response(response.status_code)
                for key, value in response.headers.items():
                    if key.lower() not in ("content-length", "transfer-encoding"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(response.content)))
                self.end_headers()
                self.wfile.write(response.content)

            do_GET = do_POST = _answer  # noqa: N815 (the stdlib's names)

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/open/v1"
        finally:
            server.shutdown()
            server.server_close()


@contextlib.contextmanager
def pull_workspace(tmp_path: Path, fake: FakeTickTick, monkeypatch, *, limits: str = "",
                   options: str = "") -> Iterator[Path]:
    """A workspace whose `tasks` adapter is ``fake``, listed afresh at every pull
    (``cache_ttl_s: 0``); ``limits`` is YAML under ``limits:``, ``options`` more adapter
    options (``"page_size: 10, "``)."""
    (tmp_path / "raw").mkdir()
    monkeypatch.setenv("TT_TOKEN", TOKEN)
    with fake.serve() as base_url:
        (tmp_path / "mindgraph.yml").write_text(
            (f"limits:\n{limits}" if limits else "") +
            "adapters:\n"
            "  - name: tasks\n    type: ticktick\n    target: ticktick\n    cache_ttl_s: 0\n"
            f"    options: {{token_env: TT_TOKEN, base_url: '{base_url}', {options}"
            f"completed_days: 36500, max_retry_wait_s: 5}}\n")
        yield tmp_path
