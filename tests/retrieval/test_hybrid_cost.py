"""A hybrid query reads what its answer needs, not what the corpus holds (issue 20: at 100,000
notes a page shared a tag with thousands and was linked from thousands; reading each one's
language or in-links cost more than the rest of the query)."""

import json

import pytest
from click.testing import CliRunner

import mindgraph.retrieval.hybrid as hybrid
import mindgraph.retrieval.present as present
from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.graph.build import KnowledgeGraph

FANS = 400


@pytest.fixture
def workspace(tmp_path):
    """Kayak.md, linked from and sharing a tag with FANS pages, and pages in English and in
    Chinese that all mention kayaks (an English question puts the Chinese ones below)."""
    wiki = tmp_path / "wiki"
    (wiki / "fans").mkdir(parents=True)
    (wiki / "en").mkdir()
    (wiki / "zh").mkdir()
    (wiki / "Kayak.md").write_text("---\ntags: [water]\n---\n# Kayak\n\nKayak trips, kayak "
                                   "rental and kayak safety. See [[Paddle]].\n")
    (wiki / "Paddle.md").write_text("# Paddle\n\nA kayak paddle for kayak trips. "
                                    "See [[Kayak]].\n")
    for i in range(FANS):
        (wiki / "fans" / f"Weather {i:03d}.md").write_text(
            f"---\ntags: [water]\n---\n# Weather {i:03d}\n\nRain and wind in the valley on "
            f"day {i}. The boat: [[Kayak|boat]].\n")
    for i in range(40):
        trips = " ".join(["kayak trips"] * (1 + i % 5))
        (wiki / "en" / f"Trip {i:02d}.md").write_text(
            f"# Trip {i:02d}\n\nOn river {i} the {trips} start early. See [[Trip {(i + 1) % 40:02d}]].\n")
        (wiki / "zh" / f"行程 {i:02d}.md").write_text(
            f"# 行程 {i:02d}\n\n在第{i}条河上，{trips} 很早就开始了。我们的独木舟课程适合所有人，"
            f"请提前预约并带上防水的衣服和鞋子。\n")
    (tmp_path / "mindgraph.yml").write_text(
        "embedding:\n  provider: hashing\n  dimension: 256\n"
        "retrieval:\n  overfetch: 200\n  min_score: 0\n")
    mg = Mindgraph.open(tmp_path)
    mg.embed()
    mg.close()
    return tmp_path


def _search(workspace, query: str, limit: int) -> dict:
    result = CliRunner().invoke(cli, ["search", "--hybrid", query, "--json", "--limit",
                                      str(limit), "-C", str(workspace)])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_hybrid_query_reads_the_language_of_its_answers_not_of_every_neighbour(
        workspace, monkeypatch):
    """The top page's follow-ups look for 2 neighbours in the query's language among its
    FANS neighbours, and the other-language factor goes down the candidates only as far as
    the answer's places: the former code read the text of every neighbour and candidate."""
    read: list[str] = []

    def counted(page):
        read.append(page.path)
        return present_language(page)

    present_language = present.page_language
    monkeypatch.setattr(hybrid, "page_language", counted)
    monkeypatch.setattr(present, "page_language", counted)
    data = _search(workspace, "kayak rental safety", 10)
    assert data["results"][0]["page"] == "Kayak.md"
    assert len(data["follow_ups"]) == 3
    assert len(set(read)) <= 60, sorted(set(read))


def test_the_graph_boost_reads_the_candidates_links_not_a_hubs_in_links(workspace,
                                                                       monkeypatch):
    """Kayak.md is linked from FANS pages; the boost among 30 candidates reads their own
    links out (a link into a candidate from another one is that one's link out)."""
    records = []
    out_links, in_links = KnowledgeGraph.out_links, KnowledgeGraph.in_links

    def counted(method):
        def wrapper(self, path):
            for record in method(self, path):
                records.append(path)
                yield record
        return wrapper

    monkeypatch.setattr(KnowledgeGraph, "out_links", counted(out_links))
    monkeypatch.setattr(KnowledgeGraph, "in_links", counted(in_links))
    data = _search(workspace, "kayak rental safety", 10)
    boosted = {r["page"]: r["boosts"].get("graph") for r in data["results"]}
    assert boosted.get("Kayak.md") or boosted.get("Paddle.md")   # linked to each other
    assert len(records) < 100


def test_the_first_answers_are_those_of_factoring_every_candidate(workspace):
    """Ten answers are the first ten of sixty (where the other-language factor reaches every
    candidate): same pages, order, scores and boosts, Chinese pages among them cut."""
    ten = _search(workspace, "kayak trips", 10)["results"]
    sixty = _search(workspace, "kayak trips", 60)["results"]
    assert len(sixty) > 40
    assert ten == sixty[:10]
    assert any("other_language" in r["boosts"] for r in sixty)
