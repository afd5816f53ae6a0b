"""`mindgraph serve` names its dashboard: the first line it prints gave only the REST
address, and neither it nor --help said that / is a dashboard to open in a browser."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
from click.testing import CliRunner
from live_server import free_port, stop, wait_healthy

from mindgraph.cli import cli


def test_serve_prints_the_dashboard_address_and_it_answers(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Zeppelins.md").write_text("# Zeppelins\n\nAirships carry trunks.\n")
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 64\n")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "mindgraph", "serve", "-C", str(tmp_path),
                               "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env={**os.environ, "MINDGRAPH_API_TOKEN": ""})
    try:
        base = f"http://127.0.0.1:{port}"
        wait_healthy(server, base)
        banner = server.stderr.readline().decode()
        assert banner.startswith(f"mindgraph REST on {base} (wiki: ")
        assert banner.rstrip().endswith(f"; dashboard: {base}/")
        assert "Bearer" not in banner               # no token here: nothing to say of one
        page = httpx.get(f"{base}/")
        assert page.status_code == 200 and "<title>mindgraph" in page.text
    finally:
        stop(server)


def test_serve_says_when_requests_need_its_token(tmp_path):
    # a token exported long ago made every request a 401 and the banner did not say why
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Zeppelins.md").write_text("# Zeppelins\n\nAirships carry trunks.\n")
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 64\n")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "mindgraph", "serve", "-C", str(tmp_path),
                               "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE,
                              env={**os.environ, "MINDGRAPH_API_TOKEN": "t" * 40})
    try:
        base = f"http://127.0.0.1:{port}"
        wait_healthy(server, base)
        assert httpx.get(f"{base}/search", params={"q": "airships"}).status_code == 401
    finally:
        stop(server)
    said = server.stderr.read().decode().splitlines()
    assert said[1].startswith("Requests need 'Authorization: Bearer <token>', the token being "
                              "the value of MINDGRAPH_API_TOKEN here"), said


def test_serve_help_names_the_dashboard():
    result = CliRunner().invoke(cli, ["serve", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())         # help wraps lines
    assert "and the dashboard (open / in a browser: http://127.0.0.1:8765/" in text


def test_serve_on_a_wiki_never_compiled_says_to_ingest_first(tmp_path):
    """`init` then `serve`: the dashboard listed 0 pages and every search came back empty,
    with nothing on the terminal saying the notes were never compiled."""
    notes = tmp_path / "vault"
    notes.mkdir()
    (notes / "Zeppelins.md").write_text("# Zeppelins\n\nAirships carry trunks.\n")
    base_dir = tmp_path / "kb"
    assert CliRunner().invoke(cli, ["init", str(base_dir), "--raw", str(notes)]).exit_code == 0
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "mindgraph", "serve", "-C", str(base_dir),
                               "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env={**os.environ, "MINDGRAPH_API_TOKEN": ""})
    try:
        wait_healthy(server, f"http://127.0.0.1:{port}")
    finally:
        stop(server)
    said = server.stderr.read().decode().splitlines()
    assert said[1] == (f"The wiki has no pages yet: the notes in {notes} were never compiled. "
                       f"Run `mindgraph ingest` first. (`serve --watch` compiles them too.)"), said
