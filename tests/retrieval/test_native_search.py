"""A note app's own search as one more hybrid retriever: fused, named in sources, bounded in
time, and absent without an adapter that offers it (real indexes, hashing embedder)."""

import json
import sys
import time

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.errors import AgentNote
from mindgraph.retrieval import native
from mindgraph.retrieval.hybrid import SearchOptions

APP = '''
import time
from mindgraph.adapters.base import Item

class SearchingApp:
    """A note app whose own search finds items by a synonym the pages do not use."""

    def __init__(self, delay_s=0.0, fail=False):
        self.delay_s, self.fail = delay_s, fail

    def fetch(self):
        return []

    def search_by_query(self, query, limit):
        time.sleep(self.delay_s)
        if self.fail:
            raise ConnectionError("app down")
        hits = {"grocery": [(Item("t2", "Buy batteries"), 0.9), (Item("t1", "Milk"), 0.4)]}
        return [h for word, found in hits.items() if word in query for h in found][:limit]
'''

PAGES = {
    "app/Errands/Milk.md": "---\ntitle: Milk\napp: shop\nitem_id: t1\nurl: "
                           "https://ticktick.com/webapp/#p/p1/tasks/t1\n---\nTwo litres of milk "
                           "from the corner store.\n",
    "app/Errands/Buy batteries.md": "---\ntitle: Buy batteries\napp: shop\nitem_id: t2\nurl: "
                                    "https://ticktick.com/webapp/#p/p1/tasks/t2\n---\nAA cells "
                                    "for the smoke detector.\n",
    "Notes/Cheese.md": "---\ntitle: Cheese\n---\nA grocery list of cheese and milk.\n",
    "Notes/Recipes.md": "---\ntitle: Recipes\n---\nPancakes need flour, eggs and milk.\n",
}


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """A wiki with two pages pulled from an app, and the app's module importable."""
    for rel, text in PAGES.items():
        path = tmp_path / "wiki" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (tmp_path / "mg_search_app.py").write_text(APP)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("mg_search_app", None)


def configure(root, options="{}", timeout=1.0):
    (root / "mindgraph.yml").write_text(
        "embedding:\n  provider: hashing\n  dimension: 256\n"
        f"retrieval:\n  native_timeout_s: {timeout}\n"
        f"adapters:\n  - name: shop\n    type: mg_search_app.SearchingApp\n    target: app\n"
        f"    options: {options}\n")
    mg = Mindgraph.open(root)
    mg.embed()
    return mg


def test_native_hits_are_fused_named_and_linked_back(workspace):
    mg = configure(workspace)
    response = mg.smart_search("grocery milk", options=SearchOptions(expansion=False))
    by_page = {r.page: r for r in response.results}
    batteries = by_page["app/Errands/Buy batteries.md"]     # its words are not in the query
    assert batteries.sources["native"] == {"rank": 1, "score": 0.9}
    assert by_page["app/Errands/Milk.md"].sources["native"]["rank"] == 2
    assert "native" not in by_page["Notes/Cheese.md"].sources
    data = response.to_dict()
    found = {r["page"]: r for r in data["results"]}
    assert "native" in found["app/Errands/Buy batteries.md"]["retrievers"]
    assert found["app/Errands/Milk.md"]["url"] == "https://ticktick.com/webapp/#p/p1/tasks/t1"
    assert found["Notes/Cheese.md"]["url"] is None
    assert "native" in data["timings_ms"]
    assert not [d for d in response.degradation if "native" in d]
    off = mg.smart_search("grocery milk", options=SearchOptions(expansion=False,
                                                               use_native=False))
    assert all("native" not in r.sources for r in off.results)
    assert "app/Errands/Buy batteries.md" not in {r.page for r in off.results}


def test_a_slow_app_never_holds_up_the_answer(workspace):
    mg = configure(workspace, "{delay_s: 3.0}", timeout=0.3)
    started = time.perf_counter()
    response = mg.smart_search("grocery milk", options=SearchOptions(expansion=False))
    took = time.perf_counter() - started
    assert took < 2.0, took
    assert any("native search of shop timed out after 0.3 s" in d
               for d in response.degradation)
    assert response.results and all("native" not in r.sources for r in response.results)
    again = mg.smart_search("grocery milk", options=SearchOptions(expansion=False))
    assert not again.cached                 # a degraded answer is not kept
    for job in [native._POOL.submit(time.sleep, 0) for _ in range(4)]:
        job.result(timeout=10)              # the app's late answers, before the next test


def test_a_failing_app_fails_only_its_retriever(workspace):
    mg = configure(workspace, "{fail: true}")
    response = mg.smart_search("grocery milk", options=SearchOptions(expansion=False))
    # the app's own words for the operator's terminal and the server's log, not for agents
    assert any("native search of shop failed (ConnectionError: app down)" in d.detail
               for d in response.degradation if isinstance(d, AgentNote)), response.degradation
    assert any("native search of shop failed (ConnectionError; the server's log has the "
               "details)" in d and "app down" not in d
               for d in response.degradation), response.degradation
    assert {r.page for r in response.results} >= {"Notes/Cheese.md"}


def test_cli_hybrid_json_names_the_native_retriever(workspace):
    configure(workspace)
    out = CliRunner().invoke(cli, ["search", "--hybrid", "grocery milk", "--json", "-C",
                                   str(workspace)], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    results = json.loads(out.output)["results"]
    batteries = next(r for r in results if r["page"] == "app/Errands/Buy batteries.md")
    assert batteries["sources"]["native"]["rank"] == 1
    assert batteries["url"].endswith("/tasks/t2")
    text = CliRunner().invoke(cli, ["search", "--hybrid", "grocery milk", "-C",
                                    str(workspace)], catch_exceptions=False).output
    assert "native #1" in text


def test_bench_includes_the_native_retriever_when_an_adapter_offers_one(workspace):
    configure(workspace)
    questions = workspace / "questions.jsonl"
    questions.write_text(json.dumps({"id": "q1", "query": "grocery batteries",
                                     "relevant": ["app/Errands/Buy batteries.md"]}) + "\n")
    run = CliRunner().invoke(cli, ["bench", str(questions), "--json", "--no-embed", "-C",
                                   str(workspace)], catch_exceptions=False)
    assert run.exit_code == 0, run.output
    methods = {m["method"]: m for m in json.loads(run.output)["methods"]}
    assert list(methods) == ["keyword", "vector", "hybrid", "native"]
    assert methods["native"]["overall"]["hit1"] == 1.0
    (workspace / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    refused = CliRunner().invoke(cli, ["bench", str(questions), "--methods", "native",
                                       "-C", str(workspace)])
    assert refused.exit_code == 2 and "no configured adapter offers its own search" \
        in refused.output
    plain = CliRunner().invoke(cli, ["bench", str(questions), "--json", "--no-embed",
                                     "--methods", "keyword", "-C", str(workspace)])
    assert [m["method"] for m in json.loads(plain.output)["methods"]] == ["keyword"]
