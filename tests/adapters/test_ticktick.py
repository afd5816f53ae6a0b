"""The TickTick adapter against the fake open API: shapes, one bulk listing, paging, rate
limits, expired tokens, deleted items, writes, and the corpus cache counting requests."""

import datetime as dt
import re

import httpx
import pytest
from ticktick_fake import INBOX_ID, TOKEN, FakeTickTick

from mindgraph.adapters.base import Item, ItemNotFound, NoteAppAdapter
from mindgraph.adapters.cache import CorpusCache
from mindgraph.adapters.notes import item_documents
from mindgraph.adapters.ticktick import TickTickAdapter
from mindgraph.errors import AdapterError

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.timezone.utc).timestamp()
PASSPORT = "63b7bebb91c0a5474805fcd4"
COLD = [("GET", "/project"), ("POST", "/task/filter"), ("GET", "/project/inbox/data"),
        ("POST", "/task/completed")]


@pytest.fixture
def fake():
    """The fixture account behind a fake open API."""
    return FakeTickTick()


def make(fake, tmp_path, clock=lambda: NOW, ttl=300.0, **options):
    sleeps = []
    adapter = TickTickAdapter(token_env="TT_TOKEN", environ={"TT_TOKEN": TOKEN},
                              transport=fake.transport, name="tasks",
                              cache=CorpusCache(tmp_path / "apps" / "tasks.json", ttl, clock),
                              clock=clock, sleep=sleeps.append, **options)
    return adapter, sleeps


def test_it_is_a_note_app_with_projects_kinds_and_the_inbox(fake, tmp_path):
    adapter, _ = make(fake, tmp_path)
    assert isinstance(adapter, NoteAppAdapter)
    projects = adapter.list_projects()
    assert [(p.name, p.kind) for p in projects] == [
        ("Inbox", "tasks"), ("Errands", "tasks"), ("Reading notes", "notes"), ("Work", "tasks")]
    assert projects[0].id == INBOX_ID                       # the closed "Old plans" is left out
    work = [i.title for i in adapter.list_items("Work")]
    assert sorted(work) == ["Fix flaky watcher test", "Ship the pgvector index",
                            "Write quarterly report"]


def test_tasks_become_items_with_dates_tags_and_completion(fake, tmp_path):
    adapter, _ = make(fake, tmp_path)
    items = {i.id: i for i in adapter.list_all()}
    passport = items[PASSPORT]
    assert passport.title == "Renew passport" and passport.project_name == "Errands"
    assert passport.tags == ("admin",)
    assert passport.due == dt.datetime(2026, 12, 14, tzinfo=dt.timezone.utc)
    assert passport.modified == dt.datetime(2026, 11, 30, 18, 2, 11, tzinfo=dt.timezone.utc)
    assert passport.completed is None
    flaky = next(i for i in items.values() if i.title == "Fix flaky watcher test")
    assert flaky.completed == dt.datetime(2026, 11, 28, 16, 20, tzinfo=dt.timezone.utc)
    assert items["63b7bebb91c0a5474805fcda"].project_name == "Inbox"
    assert adapter.url_for(passport) == ("https://ticktick.com/webapp/#p/"
                                         "6226ff9877acee87727f6bca/tasks/" + PASSPORT)
    assert Item.from_json(passport.to_json()) == passport


def test_a_cold_corpus_is_four_calls_and_a_warm_one_none(fake, tmp_path):
    adapter, _ = make(fake, tmp_path)
    assert len(adapter.list_all()) == 7
    assert [(m, p) for m, p, _ in fake.requests] == COLD
    fake.requests.clear()
    adapter.fetch()
    adapter.list_projects()
    adapter.search_by_query("replication log", 5)
    again, _ = make(fake, tmp_path)              # another process: the cache is on disk
    assert len(again.list_all()) == 7
    assert fake.requests == []


def test_the_cache_expires_after_its_time_to_live(fake, tmp_path):
    now = [NOW]
    adapter, _ = make(fake, tmp_path, clock=lambda: now[0], ttl=300)
    adapter.list_all()
    now[0] += 299
    adapter.list_all()
    assert fake.calls("GET", "/project") == 1
    now[0] += 2
    adapter.list_all()
    assert fake.calls("GET", "/project") == 2
    off, _ = make(fake, tmp_path / "off", ttl=0)   # 0 turns the cache off
    off.list_all()
    off.list_all()
    assert fake.calls("GET", "/project") == 4


def test_full_pages_are_followed(tmp_path):
    fake = FakeTickTick(page_size=1)
    adapter, _ = make(fake, tmp_path, page_size=1)
    titles = sorted(i.title for i in adapter.list_all())
    assert len(titles) == 7                        # nothing lost to the one-task pages
    # a cut /task/filter falls back to each list's /data, which is never cut
    assert fake.calls("GET", "/project/6226ff9877acee87727f6bca/data") == 1
    windows = [body["endDate"] for m, p, body in fake.requests if p == "/task/completed"]
    assert len(windows) >= 3 and windows == sorted(windows, reverse=True)
    assert windows[1] == "2026-11-28T16:20:00.000+0000"   # the oldest completedTime seen


def test_a_server_without_the_filter_endpoint_is_listed_list_by_list(fake, tmp_path):
    route = fake._route
    fake._route = lambda method, parts, body: httpx.Response(404) \
        if parts == ["task", "filter"] else route(method, parts, body)
    adapter, _ = make(fake, tmp_path)
    assert len(adapter.list_all()) == 7
    assert fake.calls("GET", "/project/6226ff9877acee87727f6bcc/data") == 1


def test_429_waits_for_retry_after_then_succeeds(fake, tmp_path):
    adapter, sleeps = make(fake, tmp_path)
    fake.throttle = ["2", "1"]
    assert len(adapter.list_projects()) == 4
    assert sleeps == [2.0, 1.0]


def test_429_retries_are_bounded(fake, tmp_path):
    adapter, sleeps = make(fake, tmp_path, max_retries=3)
    fake.throttle = ["1"] * 10
    with pytest.raises(AdapterError, match="still rate limited"):
        adapter.list_projects()
    assert len(sleeps) == 3 and fake.calls() == 4


def test_a_retry_after_longer_than_the_limit_fails_at_once(fake, tmp_path):
    adapter, sleeps = make(fake, tmp_path, max_retry_wait_s=30)
    fake.throttle = ["3600"]
    with pytest.raises(AdapterError, match="asks to wait 3600 s"):
        adapter.list_projects()
    assert sleeps == [] and fake.calls() == 1


def test_an_expired_token_names_the_variable_and_the_fix(fake, tmp_path):
    adapter, _ = make(fake, tmp_path)
    fake.token = "the-new-one"               # the old token was revoked
    with pytest.raises(AdapterError) as caught:
        adapter.list_projects()
    message = str(caught.value)
    assert "TT_TOKEN" in message and "401" in message and "export TT_TOKEN=" in message
    missing = TickTickAdapter(token_env="TT_TOKEN", environ={}, transport=fake.transport)
    with pytest.raises(AdapterError, match="TT_TOKEN is not set"):
        missing.list_projects()


def test_a_deleted_item_is_404_and_leaves_the_cache(fake, tmp_path):
    adapter, _ = make(fake, tmp_path)
    adapter.list_all()
    fake.delete(PASSPORT)
    with pytest.raises(ItemNotFound, match="deleted in TickTick"):
        adapter.get(PASSPORT)
    fake.requests.clear()
    assert PASSPORT not in {i.id for i in adapter.list_all()}
    assert fake.requests == []                   # known gone without a new listing
    with pytest.raises(ItemNotFound, match="no item"):
        adapter.update("no-such-id", title="x")


def test_create_and_update_go_to_the_app_and_into_the_cache(fake, tmp_path):
    adapter, _ = make(fake, tmp_path)
    adapter.list_all()
    created = adapter.create("Buy stamps", "For the passport forms.", project="errands")
    method, path, body = fake.requests[-1]
    assert (method, path) == ("POST", "/task")
    assert body == {"title": "Buy stamps", "content": "For the passport forms.",
                    "projectId": "6226ff9877acee87727f6bca"}
    assert created.project_name == "Errands"
    updated = adapter.update(created.id, content="For the passport forms.\nwhy: admin")
    method, path, body = fake.requests[-1]
    assert (method, path) == ("POST", f"/task/{created.id}")
    assert body["id"] == created.id and body["projectId"] == "6226ff9877acee87727f6bca"
    assert updated.content.endswith("why: admin")
    fake.requests.clear()
    cached = {i.id: i for i in adapter.list_all()}
    assert cached[created.id].content.endswith("why: admin") and fake.requests == []
    inbox = adapter.create("Water the plants")
    assert "projectId" not in fake.requests[-1][2] and inbox.project == INBOX_ID


def test_search_by_query_matches_words_of_the_cached_items(fake, tmp_path):
    adapter, _ = make(fake, tmp_path)
    hits = adapter.search_by_query("replication lag", 3)
    assert hits[0][0].title == "Designing Data-Intensive Applications"
    assert 0 < hits[0][1] <= 1
    assert adapter.search_by_query("?!", 3) == []


def test_items_become_notes_with_ids_and_deep_links(fake, tmp_path):
    adapter, _ = make(fake, tmp_path)
    docs = {d.filename: d for d in adapter.fetch()}
    note = docs["Errands/Renew passport.md"].content
    assert "item_id: 63b7bebb91c0a5474805fcd4" in note
    assert "url: https://ticktick.com/webapp/#p/6226ff9877acee87727f6bca/tasks/" in note
    assert "app: tasks" in note and "project: Errands" in note and "- admin" in note
    assert note.rstrip().endswith("bring two photos and the old passport.")
    assert docs["Errands/Renew passport.md"].metadata["mtime"] == dt.datetime(
        2026, 11, 30, 18, 2, 11, tzinfo=dt.timezone.utc).timestamp()
    twins = [Item("aaaaaaaa1", "Same"), Item("bbbbbbbb2", "same")]
    assert [d.filename for d in item_documents("x", twins, lambda i: "")] == [
        "Inbox/Same.md", "Inbox/same (bbbbbbbb).md"]


@pytest.mark.parametrize("yaml_text, key", [
    ("adapters:\n  - {name: t, type: ticktick, cache_ttl_s: -1}\n", "adapters[0].cache_ttl_s"),
    ("retrieval: {native_timeout_s: 0}\n", "retrieval.native_timeout_s"),
])
def test_bad_cache_and_native_settings_name_the_key(tmp_path, yaml_text, key):
    from mindgraph.config import load_settings
    from mindgraph.errors import ConfigError

    (tmp_path / "mindgraph.yml").write_text(yaml_text)
    with pytest.raises(ConfigError, match=re.escape(key)):
        load_settings(tmp_path)
