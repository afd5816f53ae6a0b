"""The built-in TickTick adapter, over TickTick's open API (https://api.ticktick.com/open/v1).

Calls, with the shapes of the API's documentation (developer.ticktick.com):

    GET  /project                        the lists: [{id, name, kind: TASK|NOTE, closed, ...}]
    POST /task/filter {projectIds, status: [0]}   the open tasks of every list, in one call
    GET  /project/{id}/data              {project, tasks, columns}: one list's open tasks
                                         ("inbox" for the inbox, which /project leaves out)
    POST /task/completed {projectIds, startDate, endDate}   completed tasks in a time window
    GET  /project/{pid}/task/{tid}       one task (404 when it was deleted)
    POST /task {title, content, projectId}                  create
    POST /task/{id} {id, projectId, title, content}         update

Dates are "yyyy-MM-dd'T'HH:mm:ssZ" ("2019-11-13T03:00:00+0000"). A task with ``status`` 2 is
completed at its ``completedTime``.

Paging: the open API has no cursor. /project and a list's /data come whole; /task/filter and
/task/completed answer at most ``page_size`` tasks (200), newest first: a full page of
completed tasks is followed by the window that ends at the oldest ``completedTime`` seen
(``endDate`` is inclusive), until a page comes back short; a full page of open tasks falls back to one /data call per
list, which is never cut. A cold corpus costs 4 calls however many lists there are
(/project, /task/filter, the inbox's /data, /task/completed); a warm one none (cache.py).

A pull cut at ``limits.max_pull_notes`` (``limit_listing``) takes the most recently modified
items of those read: the API has no order by modification, but open tasks come whole in one
answer and completed ones newest first, so the listing stops once it holds more than the cap
after a whole answer, and what it did not read is older completed tasks.

Search: the open API has no search endpoint. ``search_by_query`` matches the query's words in
the cached items' titles (double weight) and content — the app's corpus searched locally, not
TickTick's own ranking — so it finds items whose words a compiled page may have lost.

The access token is an OAuth2 token of a TickTick developer app (scope ``tasks:read
tasks:write``), read from the environment variable named by ``token_env`` (TICKTICK_TOKEN).
"""

from __future__ import annotations

import datetime as dt
import re
import time
from typing import Any, Callable, Iterable, Iterator, Mapping

import httpx

from ..errors import AdapterError
from .base import Item, ItemNotFound, ListingBudget, ListingCut, Project, RawDocument
from .cache import CorpusCache
from .http import MAX_RESPONSE_BYTES, AppHTTP
from .notes import item_documents

BASE_URL = "https://api.ticktick.com/open/v1"
WEB_URL = "https://ticktick.com/webapp/#p/{project}/tasks/{item}"
TOKEN_HELP = ("Register an app at https://developer.ticktick.com/manage, get an access token "
              "through its OAuth flow (scope tasks:read tasks:write) and export it; see "
              "'Note apps' in the README.")
INBOX = "inbox"
COMPLETED = 2
MAX_PAGES = 50
_WORD = re.compile(r"\w+", re.UNICODE)


class TickTickAdapter:
    """TickTick lists and tasks: pull them as notes, search them, create and update them."""

    remote = True        # the loader gives it a corpus cache and its configured name

    def __init__(self, token_env: str = "TICKTICK_TOKEN", target: str = "ticktick",
                 projects: Iterable[str] = (), inbox: bool = True, completed_days: int = 30,
                 page_size: int = 200, base_url: str = BASE_URL, web_url: str = WEB_URL,
                 timeout_s: float = 10.0, max_retries: int = 3, max_retry_wait_s: float = 60.0,
                 name: str = "ticktick", cache: CorpusCache | None = None,
                 transport: httpx.BaseTransport | None = None,
                 environ: Mapping[str, str] | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.time,
                 max_response_bytes: int = MAX_RESPONSE_BYTES):
        self.target = target
        self.name = name
        self.only = tuple(str(p) for p in ([projects] if isinstance(projects, str)
                                           else projects))
        self.inbox = inbox
        self.completed_days = completed_days
        self.page_size = page_size
        self.web_url = web_url
        self.cache = cache or CorpusCache(None, 0)
        self.clock = clock
        self.listing_bytes: int | None = None     # limit_listing
        self.listing_notes: int | None = None
        self.listing_cut = False                  # the last fetch stopped at listing_notes
        self.http = AppHTTP(f"TickTick adapter {name!r}", base_url, token_env,
                            token_help=TOKEN_HELP, transport=transport, environ=environ,
                            timeout_s=timeout_s, max_retries=max_retries,
                            max_wait_s=max_retry_wait_s, sleep=sleep,
                            max_response_bytes=max_response_bytes)

    # -- the corpus ------------------------------------------------------------------------
    def corpus_items(self) -> list[Item]:
        """Every cached item (listing the account when the cache is cold)."""
        return list(self.cache.get(self._fetch_corpus).items)

    def list_all(self) -> list[Item]:
        """Every open task of the chosen lists and the tasks completed in the last
        ``completed_days`` days (through the cache)."""
        return self.corpus_items()

    def list_projects(self) -> list[Project]:
        """The chosen lists (all open ones unless ``projects`` names some), inbox first."""
        return list(self.cache.get(self._fetch_corpus).projects)

    def list_items(self, project_id: str) -> list[Item]:
        """The cached items of one list (by id or name)."""
        project = self._project(project_id)
        return [i for i in self.corpus_items() if i.project == project.id
                or (project.id == INBOX and i.project.startswith(INBOX))]

    def limit_listing(self, max_bytes: int | None, max_notes: int | None = None) -> None:
        """Read at most ``max_bytes`` of the app's answers for one listing (every caller
        gives ``limits.max_pull_bytes``): past them the listing stops with ListingTooLarge,
        before more is held in memory. None: no limit but each answer's
        ``max_response_bytes``. Given ``max_notes`` (`pull`'s ``limits.max_pull_notes``), the
        listing also stops once it holds more items than that: ``fetch`` gives those read,
        and nothing is cached (the corpus is not whole)."""
        self.listing_bytes = max_bytes
        self.listing_notes = max_notes

    def fetch(self) -> list[RawDocument]:
        """Every item as a raw note (what `mindgraph pull` files); a listing cut at
        ``max_notes`` gives the items read, more than pull takes, and sets ``listing_cut``
        (pull takes the most recently modified of them and says more were left out)."""
        self.listing_cut = False
        try:
            items = self.corpus_items()
        except ListingCut as cut:
            items = cut.items
            self.listing_cut = True
        return item_documents(self.name, items, self.url_for)

    def search_by_query(self, query: str, limit: int = 10) -> list[tuple[Item, float]]:
        """Items whose title (double weight) or content holds the query's words, best first;
        a local match over the cached corpus (the open API has no search endpoint)."""
        words = {w.casefold() for w in _WORD.findall(query) if len(w) > 1}
        if not words:
            return []
        scored = []
        for item in self.corpus_items():
            title = {w.casefold() for w in _WORD.findall(item.title)}
            body = {w.casefold() for w in _WORD.findall(item.content)}
            score = sum(2.0 * (w in title) + 1.0 * (w in body) for w in words) / len(words)
            if score > 0:
                scored.append((item, round(score / 3.0, 4)))
        scored.sort(key=lambda pair: (-pair[1], pair[0].id))
        return scored[:limit]

    # -- one item --------------------------------------------------------------------------
    def get(self, item_id: str) -> Item:
        """One task, fresh from the app (its list from the cached corpus)."""
        known = self._known(item_id)
        try:
            task = self.http.request("GET", f"/project/{known.project}/task/{known.id}")
        except ItemNotFound:
            self.cache.drop(known.id)
            raise ItemNotFound(f"TickTick adapter {self.name!r}: item {known.id} "
                               f"({known.title!r}) was deleted in TickTick; the next "
                               f"`mindgraph pull` removes its raw note.") from None
        item = self._item(task, self._names())
        self.cache.put(item)
        return item

    def create(self, title: str, content: str = "", project: str | None = None) -> Item:
        """A new task in ``project`` (a list's id or name; None: the inbox)."""
        body: dict[str, Any] = {"title": title, "content": content}
        if project is not None:
            found = self._project(project)
            if found.id != INBOX:
                body["projectId"] = found.id
        task = self.http.request("POST", "/task", body)
        item = self._item(task, self._names())
        self.cache.put(item)
        return item

    def update(self, item_id: str, *, title: str | None = None,
               content: str | None = None) -> Item:
        """Change a task's title or content (the fields not given stay as they are)."""
        current = self.get(item_id)
        body: dict[str, Any] = {"id": current.id, "projectId": current.project}
        if title is not None:
            body["title"] = title
        if content is not None:
            body["content"] = content
        try:
            task = self.http.request("POST", f"/task/{current.id}", body)
        except ItemNotFound:
            self.cache.drop(current.id)
            raise
        item = self._item(task, self._names())
        self.cache.put(item)
        return item

    def url_for(self, item: Item) -> str:
        """The task in TickTick's web app (the apps open the same link)."""
        return self.web_url.format(project=item.project, item=item.id)

    # -- the API ---------------------------------------------------------------------------
    def _fetch_corpus(self) -> tuple[list[Project], list[Item]]:
        budget = None if self.listing_bytes is None else ListingBudget(self.listing_bytes,
                                                                      self.http.app)
        listed = self.http.request("GET", "/project", budget=budget) or []
        projects = [Project(str(p["id"]), str(p.get("name", "")),
                            "notes" if str(p.get("kind", "")).upper() == "NOTE" else "tasks")
                    for p in listed if isinstance(p, dict) and not p.get("closed")]
        if self.only:
            wanted = {w.casefold() for w in self.only}
            projects = [p for p in projects if p.id.casefold() in wanted
                        or p.name.casefold() in wanted]
        names = {p.id: p.name for p in projects}
        tasks: dict[str, dict] = {}
        ids = [p.id for p in projects]

        def enough() -> None:       # past max_notes: read no further (ListingCut)
            if self.listing_notes is not None and len(tasks) > self.listing_notes:
                raise ListingCut(self.listing_notes,
                                 [self._item(t, names) for t in tasks.values()], self.http.app)

        if ids:
            try:
                open_tasks = self.http.request("POST", "/task/filter",
                                               {"projectIds": ids, "status": [0]},
                                               budget) or []
            except ItemNotFound:       # a server without /task/filter: each list whole
                open_tasks = None
            if open_tasks is None or len(open_tasks) >= self.page_size:   # or cut
                open_tasks = [t for pid in ids for t in self._project_data(pid, budget)]
            tasks.update((str(t["id"]), t) for t in open_tasks)
            enough()
        if self.inbox and (not self.only or INBOX in {w.casefold() for w in self.only}):
            inbox_tasks = self._project_data(INBOX, budget)
            for task in inbox_tasks:
                names.setdefault(str(task.get("projectId", "")), "Inbox")
                tasks[str(task["id"])] = task
            inbox_id = next((str(t.get("projectId")) for t in inbox_tasks), INBOX)
            projects.insert(0, Project(inbox_id, "Inbox"))
            ids.append(inbox_id)
            enough()
        for page in self._completed(ids, budget):
            tasks.update((str(t["id"]), t) for t in page)
            enough()
        return projects, [self._item(t, names) for t in tasks.values()]

    def _project_data(self, project_id: str, budget: ListingBudget | None = None
                      ) -> list[dict]:
        try:
            data = self.http.request("GET", f"/project/{project_id}/data", budget=budget) or {}
        except ItemNotFound:      # deleted between the listing and now: it has no tasks
            return []
        return [t for t in data.get("tasks") or [] if isinstance(t, dict) and "id" in t]

    def _completed(self, ids: list[str], budget: ListingBudget | None = None
                   ) -> Iterator[list[dict]]:
        """The pages of tasks completed in the last ``completed_days`` days, as they come."""
        if self.completed_days <= 0 or not ids:
            return
        end = dt.datetime.fromtimestamp(self.clock(), dt.timezone.utc)
        start = end - dt.timedelta(days=self.completed_days)
        found: dict[str, dict] = {}
        for _ in range(MAX_PAGES):
            page = self.http.request("POST", "/task/completed", {
                "projectIds": ids, "startDate": _format(start), "endDate": _format(end)},
                budget) or []
            page = [t for t in page if isinstance(t, dict) and "id" in t]
            new = [t for t in page if str(t["id"]) not in found]
            found.update((str(t["id"]), t) for t in page)
            yield page
            times = [w for w in (_parse(t.get("completedTime")) for t in page) if w]
            if len(page) < self.page_size or not times:
                break
            # the next window ends at the oldest time seen (inclusive: others completed in
            # that very millisecond come again and are deduplicated); a window that brought
            # nothing new steps past it
            end = min(times) if new else min(times) - dt.timedelta(milliseconds=1)

    def _item(self, task: Any, names: Mapping[str, str]) -> Item:
        if not isinstance(task, dict) or "id" not in task:
            raise AdapterError(f"TickTick adapter {self.name!r}: expected a task object with "
                               f"an id, got {str(task)[:80]!r}.")
        project = str(task.get("projectId", ""))
        completed = _parse(task.get("completedTime")) if task.get("status") == COMPLETED \
            else None
        return Item(id=str(task["id"]), title=str(task.get("title") or ""),
                    content=str(task.get("content") or task.get("desc") or ""),
                    project=project,
                    project_name=names.get(project)
                    or ("Inbox" if project.startswith(INBOX) else ""),
                    tags=tuple(str(t) for t in task.get("tags") or ()),
                    due=_parse(task.get("dueDate")),
                    modified=_parse(task.get("modifiedTime")) or completed,
                    completed=completed)

    def _names(self) -> dict[str, str]:
        corpus = self.cache.cached()
        return {p.id: p.name for p in corpus.projects} if corpus else {}

    def _project(self, ref: str) -> Project:
        projects = self.list_projects()
        wanted = ref.casefold()
        for project in projects:
            if project.id.casefold() == wanted or project.name.casefold() == wanted:
                return project
        if wanted == INBOX:
            return Project(INBOX, "Inbox")
        raise ItemNotFound(f"TickTick adapter {self.name!r}: no list {ref!r}; lists: "
                           f"{', '.join(p.name for p in projects) or 'none'}.")

    def _known(self, item_id: str) -> Item:
        item = next((i for i in self.corpus_items() if i.id == item_id), None)
        if item is None:
            raise ItemNotFound(f"TickTick adapter {self.name!r}: no item {item_id!r} among "
                               f"the open tasks and those completed in the last "
                               f"{self.completed_days} days; check the id (`mindgraph get` "
                               f"shows a pulled note's item_id).")
        return item


def _parse(value: Any) -> dt.datetime | None:
    """A TickTick time ("2019-11-13T03:00:00+0000", with or without milliseconds), in UTC."""
    if not isinstance(value, str) or not value:
        return None
    for layout in ("%Y-%m-%dT%H:%M:%S.%f%z", "%Y-%m-%dT%H:%M:%S%z"):
        try:
            when = dt.datetime.strptime(value, layout)
            break
        except ValueError:
            continue
    else:
        try:
            when = dt.datetime.fromisoformat(value)
        except ValueError:
            return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.astimezone(dt.timezone.utc)


def _format(when: dt.datetime) -> str:
    return when.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000+0000")
