"""Odd answers of an OpenAI-compatible server, through the real CLI: each is a clear error
naming the provider and what was wrong (never a traceback or "internal error"), and unusable
vectors (all zeros, NaN, inf) are refused per chunk instead of stored."""

from __future__ import annotations

import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli


class FakeServer:
    """A local OpenAI-compatible server answering with ``answer(path, request_json)``."""

    def __init__(self, answer):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                body = json.dumps(outer.answer(self.path, request)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.answer = answer
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/v1"

    def close(self):
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def serve_answers():
    """Start a FakeServer for a function of (path, request) → JSON answer."""
    servers = []

    def start(answer):
        servers.append(FakeServer(answer))
        return servers[-1].url

    yield start
    for server in servers:
        server.close()


def _workspace(tmp_path, config: str, notes: dict[str, str]):
    base = tmp_path / "kb"
    assert CliRunner().invoke(cli, ["init", str(base)]).exit_code == 0
    (base / "mindgraph.yml").write_text(config)
    for name, text in notes.items():
        (base / "raw" / name).write_text(text)
    return base


def _embedding_config(url):
    return f"embedding:\n  provider: openai\n  base_url: {url}\n  model: m\n  dimension: 3\n"


@pytest.mark.parametrize("answer, problem", [
    ({"data": [1, 2, 3]}, "'data' must be a list of objects"),
    ({"data": "vectors"}, "no 'data' list"),
    ({"vectors": []}, "no 'data' list"),
    ([1, 2], "no 'data' list"),
    ({"data": [{"embedding": ["a", "b", "c"]}]}, "not lists of numbers"),
    ({"data": [{"embedding": [1, 2, 3], "index": "zero"}]}, "'index' is not a number"),
])
def test_a_malformed_embedding_answer_is_a_clear_error(tmp_path, serve_answers, answer,
                                                       problem):
    url = serve_answers(lambda path, request: answer)
    base = _workspace(tmp_path, _embedding_config(url), {"A.md": "# A\n\nSome text.\n"})
    assert CliRunner().invoke(cli, ["ingest", "-C", str(base)]).exit_code == 0
    result = CliRunner().invoke(cli, ["embed", "-C", str(base)], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert "openai embeddings at" in result.output and problem in result.output


@pytest.mark.parametrize("bad, why", [([0.0, 0.0, 0.0], "an all-zero vector"),
                                      ([math.nan, 1.0, 0.0], "NaN or infinite"),
                                      ([math.inf, 1.0, 0.0], "NaN or infinite")])
def test_unusable_vectors_are_refused_per_chunk(tmp_path, serve_answers, bad, why):
    def answer(path, request):
        return {"data": [{"index": i, "embedding": bad if "Broken" in text else [1.0, 2.0, 3.0]}
                         for i, text in enumerate(request["input"])]}

    url = serve_answers(answer)
    base = _workspace(tmp_path, _embedding_config(url),
                      {"Good.md": "# Good\n\nFine text.\n", "Bad.md": "# Bad\n\nBroken text.\n"})
    assert CliRunner().invoke(cli, ["ingest", "-C", str(base)]).exit_code == 0
    result = CliRunner().invoke(cli, ["embed", "-C", str(base), "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert len(report["refused"]) == 1
    assert report["refused"][0].startswith("Bad.md#") and why in report["refused"][0]
    assert report["embedded"] == report["chunks"] - 1
    again = json.loads(CliRunner().invoke(cli, ["embed", "-C", str(base), "--json"]).output)
    assert again["embedded"] == 0 and len(again["refused"]) == 1     # tried again, refused again


@pytest.mark.parametrize("answer", [{"choices": [{"message": "str"}]},
                                    {"choices": ["str"]}, {"choices": "none"}, ["x"]])
def test_a_malformed_chat_answer_fails_its_note_clearly(tmp_path, serve_answers, answer):
    url = serve_answers(lambda path, request: answer)
    config = f"compile:\n  provider: openai\n  base_url: {url}\n  model: m\n  max_retries: 0\n"
    base = _workspace(tmp_path, config, {"A.md": "# A\n\nSome text.\n"})
    result = CliRunner().invoke(cli, ["ingest", "-C", str(base)], catch_exceptions=False)
    assert "internal error" not in result.output and "Traceback" not in result.output
    assert "A.md" in result.output
    assert "openai-compatible server at" in result.output and "unexpected answer" in result.output


@pytest.mark.parametrize("frontmatter, problem", [
    ("title: A\ntype: note\ntags:\n" + "".join(f"  - t{i}\n" for i in range(12_000)),
     "at line 4: field 'tags' holds 12,000 items, past the 10,000-value limit for the "
     "model's frontmatter."),
    ("title: A\nboom: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, "
     "*a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, "
     "*b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, "
     "*b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, "
     "*b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, "
     "*b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n",
     "at line 5: field 'c' is past the 10,000-value limit for the model's frontmatter once "
     "its YAML aliases"),
])
def test_a_model_page_past_the_value_limit_names_the_field_and_line(tmp_path, serve_answers,
                                                                     frontmatter, problem):
    """It said "more than 10,000 values once YAML aliases are expanded": of what, where?"""
    page = f"---\n{frontmatter}---\n\n## Part\n\nText.\n"
    url = serve_answers(lambda path, request: {
        "choices": [{"message": {"content": page}, "finish_reason": "stop"}]})
    config = f"compile:\n  provider: openai\n  base_url: {url}\n  model: m\n  max_retries: 0\n"
    base = _workspace(tmp_path, config, {"A.md": "# A\n\nSome text.\n"})
    result = CliRunner().invoke(cli, ["ingest", "-C", str(base)], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert f"A.md: the model's frontmatter {problem}" in result.output
    assert "Traceback" not in result.output
