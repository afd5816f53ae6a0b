"""`mindgraph mcp` over stdio as a person meets it: a notice on stderr at a terminal, and an
error and a non-zero status for stdin that is not JSON-RPC; stdout stays the protocol's."""

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

ENTRY = [sys.executable, "-m", "mindgraph"]


@pytest.fixture
def ws(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Home.md").write_text("# Home\n\nThe start page.\n")
    return tmp_path


def mcp(ws, stdin):
    return subprocess.run(ENTRY + ["-C", str(ws), "mcp"], input=stdin, capture_output=True,
                          text=True, timeout=60)


def test_garbage_on_stdin_is_an_error_on_stderr_and_a_non_zero_exit(ws):
    result = mcp(ws, "garbage\n")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "not a JSON-RPC message" in result.stderr and "MCP client" in result.stderr


def test_a_client_message_is_answered_on_stdout_alone(ws):
    result = mcp(ws, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + "\n")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert "speaking MCP" not in result.stderr       # stdin is a pipe: a client, no notice


def test_blank_lines_and_crlf_between_messages_are_no_error(ws):
    """A client writing CRLF, or an empty line between two messages, sent no message that
    could be refused: exit 0, both answered (they made the run exit 2)."""
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    result = mcp(ws, "\n" + ping + "\r\n\r\n  \n" + ping.replace('"id": 1', '"id": 2') + "\n")
    assert result.returncode == 0, result.stderr
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == [1, 2]
    assert "not a JSON-RPC message" not in result.stderr


def test_a_terminal_on_stdin_gets_a_notice_on_stderr(ws):
    leader, follower = pty.openpty()
    proc = subprocess.Popen(ENTRY + ["-C", str(ws), "mcp"], stdin=follower,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(follower)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            os.write(leader, b"\x04")      # Ctrl-D: end of input, once it is up
        out, err = proc.communicate(timeout=30)
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
    assert "speaking MCP over stdio; connect a client, Ctrl-C to stop" in err
    assert out == ""


def test_the_readme_client_configuration_spawns_a_server_that_answers(ws):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = readme.split('"mcpServers"', 1)[0].rsplit("```json", 1)[1] + '"mcpServers"' + \
        readme.split('"mcpServers"', 1)[1].split("```", 1)[0]
    server = json.loads(block.replace("\n  ", "\n"))["mcpServers"]["mindgraph"]
    args = [str(ws) if a.endswith("notes-workspace") else a for a in server["args"]]
    assert server["command"].endswith("/.venv/bin/mindgraph") and args[:2] == ["-C", str(ws)]
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + "\n"
    result = subprocess.run(ENTRY + args, input=ping, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and json.loads(result.stdout)["id"] == 1


def test_stdio_needs_no_identity_tokens_in_its_environment(ws):
    """An MCP client starts the server with a minimal environment: with identities configured
    (tokens for HTTP callers), stdio is the local identity and answered nothing but "identity
    'alice' reads its token from MG_TOKEN_ALICE, which is not set". HTTP still checks them."""
    (ws / "mindgraph.yml").write_text("scopes:\n  identities:\n    - name: alice\n"
                                      "      token_env: MG_TOKEN_ALICE\n      tenant: acme\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MG_TOKEN")}
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + "\n"
    result = subprocess.run(ENTRY + ["-C", str(ws), "mcp"], input=ping, capture_output=True,
                            text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["id"] == 1
    http = subprocess.run(ENTRY + ["-C", str(ws), "mcp", "--transport", "http", "--port", "1"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert http.returncode != 0 and "MG_TOKEN_ALICE, which is not set" in http.stderr


def test_requests_written_before_stdin_closes_are_all_answered(ws):
    """A client that writes its requests and closes stdin (a script piping a batch) gets
    every answer: the SDK cancelled the requests still running when stdin ended, so a tool
    call sent with `printf … | mindgraph mcp` went unanswered."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "batch", "version": "1"}}}
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    calls = [{"jsonrpc": "2.0", "id": n, "method": "tools/call",
              "params": {"name": "search", "arguments": {"query": f"start page {n}"}}}
             for n in range(2, 6)]
    result = mcp(ws, "\n".join(json.dumps(m) for m in [init, done, *calls]) + "\n")
    assert result.returncode == 0, result.stderr
    answers = {json.loads(line)["id"]: json.loads(line) for line in result.stdout.splitlines()}
    assert sorted(answers) == [1, 2, 3, 4, 5], result.stdout
    assert all("Home.md" in json.dumps(answers[n]) for n in range(2, 6))


def _rpc(id_, method, params=None):
    message = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message) + "\n"


def test_a_request_before_initialize_is_told_to_send_initialize_first(ws):
    """The SDK answered a bare -32602 "Invalid request parameters" (data ""), which reads as
    a fault in the request: the answer now names the fix, and after initialize the same
    request is served."""
    init = _rpc(2, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "t", "version": "0"}})
    initialized = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
    result = mcp(ws, _rpc(1, "tools/list") + init + initialized + _rpc(3, "tools/list"))
    assert result.returncode == 0, result.stderr
    answers = {a["id"]: a for a in map(json.loads, result.stdout.splitlines())}
    early = answers[1]["error"]
    assert early["code"] == -32602
    assert "before 'initialize'" in early["message"]
    assert early["data"] == {"method": "tools/list", "send_first": "initialize"}
    assert "result" in answers[2]
    assert any(t["name"] == "search" for t in answers[3]["result"]["tools"])


def test_a_wiki_never_compiled_is_said_on_stderr_and_stdout_stays_the_protocol(tmp_path):
    """`init` then `mcp`: every tool answered empty, and nothing on the client's log said the
    notes were never compiled (`serve` said it at start)."""
    notes = tmp_path / "vault"
    notes.mkdir()
    (notes / "Zeppelins.md").write_text("# Zeppelins\n\nAirships carry trunks.\n")
    base = tmp_path / "kb"
    assert subprocess.run(ENTRY + ["init", str(base), "--raw", str(notes)],
                          capture_output=True, timeout=60).returncode == 0
    result = mcp(base, _rpc(1, "ping"))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert result.stderr.splitlines()[0] == (
        f"mindgraph: The wiki has no pages yet: the notes in {notes} were never compiled. "
        f"Run `mindgraph ingest` first. (`mcp --watch` compiles them too.)"), result.stderr


def test_a_wiki_with_pages_starts_without_a_word_on_stderr(ws):
    result = mcp(ws, _rpc(1, "ping"))
    assert result.returncode == 0 and "no pages" not in result.stderr, result.stderr
