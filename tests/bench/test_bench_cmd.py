"""`mindgraph bench`: scores per method, language and intent over a real (small) workspace."""

import json

from click.testing import CliRunner

from mindgraph.bench.runner import run_methods
from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.retrieval.datasets import load_questions

PAGES = {
    "Sync regions.md": "# Sync regions\n\nChoose the data center region for your remote vault.\n",
    "Canvas.md": "# Canvas\n\nCanvas is an infinite board for cards and notes.\n",
    "Recipes.md": "# Recipes\n\nPancakes need flour, eggs and milk.\n",
}
QUESTIONS = [
    {"id": "q1", "query": "which data center region holds my remote vault?",
     "relevant": ["Sync regions.md"], "lang": "en", "intent": "location", "kind": "paraphrase"},
    {"id": "q2", "query": "infinite board for cards", "relevant": ["Canvas.md"],
     "lang": "en", "intent": "concept", "kind": "exact"},
    {"id": "q3", "query": "什么是白板", "relevant": ["Canvas.md"], "lang": "zh",
     "intent": "concept", "kind": "paraphrase"},
]


def workspace(tmp_path):
    for name, text in PAGES.items():
        (tmp_path / "wiki").mkdir(exist_ok=True)
        (tmp_path / "wiki" / name).write_text(text)
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 64\n")
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n".join(json.dumps(q) for q in QUESTIONS))
    return questions


def test_bench_json_reports_every_method_language_and_intent(tmp_path):
    questions = workspace(tmp_path)
    result = CliRunner().invoke(cli, ["bench", str(questions), "-C", str(tmp_path),
                                      "--methods", "keyword,hybrid", "--json"])
    assert result.exit_code == 0, result.output
    reports = {r["method"]: r for r in json.loads(result.output)["methods"]}
    assert set(reports) == {"keyword", "hybrid"}
    keyword = reports["keyword"]
    assert keyword["overall"]["n"] == 3 and set(keyword["by_lang"]) == {"en", "zh"}
    assert keyword["by_intent"]["concept"]["n"] == 2
    # the two English questions are found first by keywords; the Chinese one cannot be
    assert keyword["by_lang"]["en"]["hit1"] == 1.0 and keyword["by_lang"]["zh"]["mrr10"] == 0.0
    assert [m["id"] for m in keyword["misses"]] == ["q3"]


def test_bench_reports_each_question_style_when_lines_name_one(tmp_path):
    questions = workspace(tmp_path)
    styled = [dict(q, style=style) for q, style in zip(QUESTIONS, ("paraphrase", "keyword",
                                                                    "paraphrase"))]
    questions.write_text("\n".join(json.dumps(q) for q in styled))
    result = CliRunner().invoke(cli, ["bench", str(questions), "-C", str(tmp_path),
                                      "--methods", "keyword", "--json"])
    assert result.exit_code == 0, result.output
    by_style = json.loads(result.output)["methods"][0]["by_style"]
    assert {k: v["n"] for k, v in by_style.items()} == {"keyword": 1, "paraphrase": 2}
    # q2 (keyword style) is found first; of the paraphrases only the English one is
    assert by_style["keyword"]["hit1"] == 1.0 and by_style["paraphrase"]["hit1"] == 0.5
    table = CliRunner().invoke(cli, ["bench", str(questions), "-C", str(tmp_path),
                                     "--methods", "keyword"])
    assert "per style:" in table.output and "keyword:paraphrase" in table.output
    plain = CliRunner().invoke(cli, ["bench", str(workspace(tmp_path)), "-C", str(tmp_path),
                                     "--methods", "keyword", "--json"])
    assert json.loads(plain.output)["methods"][0]["by_style"] == {}


def test_every_method_embeds_its_own_queries(tmp_path):
    questions = workspace(tmp_path)
    mg = Mindgraph.open(tmp_path)
    mg.embed()
    retriever = mg.hybrid_retriever()
    embedded: list[str] = []
    real = retriever.vector.provider.embed_queries
    retriever.vector.provider.embed_queries = lambda texts: (embedded.extend(texts),
                                                             real(texts))[1]
    run_methods(retriever, load_questions(questions), ["vector", "hybrid"])
    assert sorted(embedded) == sorted([q["query"] for q in QUESTIONS] * 2)


def test_bad_question_files_are_usage_errors_naming_the_line(tmp_path):
    workspace(tmp_path)

    def bench(text):
        path = tmp_path / "bad.jsonl"
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        return CliRunner().invoke(cli, ["bench", str(path), "-C", str(tmp_path),
                                        "--methods", "keyword"])

    for text, message in (('{"id": "a", "query": "x", "relevant": []}\n{"id": ',
                           "bad.jsonl:2: not valid JSON"),
                          ('{"id": "a", "relevant": ["Canvas.md"]}', "bad.jsonl:1: missing query"),
                          ("[1, 2]", "bad.jsonl:1: expected a JSON object"),
                          (b'{"id": "a", "query": "x", "relevant": []}\n'
                           b'{"id": "b", "query": "\xff", "relevant": []}', "bad.jsonl:2: not UTF-8"),
                          ("\n\n", "holds no questions")):
        result = bench(text)
        assert result.exit_code == 2, (text, result.output)
        assert message in result.output and "Traceback" not in result.output
    stray = bench('{"id": "a", "query": "canvas", "relevant": ["Canvass.md"]}')
    assert stray.exit_code == 0
    assert "1 relevant page(s)" in stray.output and "Canvass.md" in stray.output


def test_a_device_or_a_folder_that_is_no_dataset_is_named_as_such(tmp_path):
    workspace(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    for given, message in (("/dev/null", "/dev/null is not a regular file"),
                           (str(empty), f"{empty} is not a BEIR folder")):
        result = CliRunner().invoke(cli, ["bench", given, "-C", str(tmp_path),
                                          "--methods", "keyword"])
        assert result.exit_code in (1, 2) and message in result.output, result.output
        assert "does not exist" not in result.output and "Traceback" not in result.output


def beir_folder(root):
    """A three-document BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv)."""
    folder = root / "tiny"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(
        {"_id": str(i), "title": name.removesuffix(".md"), "text": text})
        for i, (name, text) in enumerate(PAGES.items())))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "pancakes flour"}))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\t2\t1\n")
    return folder


def test_keyword_only_bench_embeds_nothing_and_vector_methods_still_embed(tmp_path):
    """A keyword run over SciFact spent 11 minutes embedding the corpus it never used."""
    questions = workspace(tmp_path)
    beir = beir_folder(tmp_path)
    state = tmp_path / ".mindgraph"

    def bench(source, methods):
        result = CliRunner().invoke(cli, ["bench", str(source), "-C", str(tmp_path),
                                          "--methods", methods, "--json"])
        assert result.exit_code == 0, result.output
        return {r["method"]: r for r in json.loads(result.output)["methods"]}

    assert bench(questions, "keyword")["keyword"]["overall"]["hit1"] > 0
    assert bench(beir, "keyword")["keyword"]["overall"]["hit1"] == 1.0
    assert not (state / "vectors").exists() and not (state / "bench").exists()
    bench(questions, "keyword,vector")
    bench(beir, "vector")
    assert any((state / "vectors").iterdir()) and any((state / "bench" / "tiny").iterdir())


TRANSLATED = {
    "en/Canvas.md": "---\npermalink: plugins/canvas\n---\n# Canvas\n\nCanvas is an infinite "
                    "board for cards and notes.\n",
    "ja/キャンバス.md": "---\npermalink: plugins/canvas\n---\n# キャンバス\n\nキャンバス（Canvas）は"
                    "カードとノートを並べる無限のボードです。\n",
    "en/Sync regions.md": "---\npermalink: sync/regions\n---\n# Sync regions\n\nChoose the "
                          "data center region for your remote vault.\n",
    "ja/Syncリージョン.md": "---\npermalink: sync/regions\n---\n# Syncリージョン\n\nリモート保管庫の"
                         "データセンターを選びます。\n",
    "en/Recipes.md": "---\npermalink: recipes\n---\n# Recipes\n\nPancakes need flour.\n",
}
CROSS = [
    {"id": "c1", "query": "an infinite Canvas board for cards", "relevant": ["en/Canvas.md"],
     "lang": "en", "intent": "concept"},
    {"id": "c2", "query": "pancakes", "relevant": ["en/Recipes.md"], "lang": "en"},
    {"id": "c3", "query": "キャンバスとは", "relevant": ["ja/キャンバス.md"], "lang": "ja"},
]


def test_cross_lingual_asks_other_languages_over_one_languages_pages(tmp_path):
    for name, text in TRANSLATED.items():
        (tmp_path / "wiki" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "wiki" / name).write_text(text)
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 64\n")
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n".join(json.dumps(q, ensure_ascii=False) for q in CROSS))
    result = CliRunner().invoke(cli, ["bench", str(questions), "-C", str(tmp_path),
                                      "--methods", "keyword,hybrid", "--cross-lingual", "ja",
                                      "--json"])
    assert result.exit_code == 0, result.output
    # the Japanese question is not cross-lingual; the recipe page has no Japanese twin
    assert "1 question(s) left out" in result.stderr
    data = json.loads(result.stdout)
    assert data["questions"] == 1
    keyword = {r["method"]: r for r in data["methods"]}["keyword"]
    # in the whole wiki the English page wins; over the Japanese pages its twin is the answer
    assert keyword["overall"]["hit1"] == 1.0 and keyword["by_lang"] == {
        "en": keyword["overall"]}
    text = CliRunner().invoke(cli, ["bench", str(questions), "-C", str(tmp_path),
                                    "--methods", "keyword", "--cross-lingual", "ja"]).stdout
    assert "over the 2 ja pages" in text and "(cross-lingual)" in text


def test_cross_lingual_into_english_translates_the_questions_words(tmp_path):
    """The other direction: a Japanese question over the English pages only; its words are
    looked up in JMdict (データセンター → data center), so BM25 finds the English twin."""
    for name, text in TRANSLATED.items():
        (tmp_path / "wiki" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "wiki" / name).write_text(text)
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "j1", "query": "データセンターを選ぶには",
                                     "relevant": ["ja/Syncリージョン.md"], "lang": "ja"},
                                    ensure_ascii=False))

    def keyword(translate: str) -> dict:
        (tmp_path / "mindgraph.yml").write_text(
            f"embedding:\n  provider: hashing\n  dimension: 64\n"
            f"retrieval:\n  translate_queries: {translate}\n")
        result = CliRunner().invoke(cli, ["bench", str(questions), "-C", str(tmp_path),
                                          "--methods", "keyword", "--cross-lingual", "en",
                                          "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["methods"][0]["by_lang"]["ja"]

    assert keyword("true")["hit1"] == 1.0
    assert keyword("false")["mrr10"] == 0.0
