"""A local server speaking OpenAI's chat-completions API, for search tests that go through the
CLI (which builds its own HTTP client, so httpx.MockTransport cannot be slipped in)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


def completion(text: str) -> dict:
    """A chat.completion success body, as api.openai.com sends it."""
    return {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", "object": "chat.completion",
        "created": 1741569952, "model": "gpt-4.1-mini-2025-04-14",
        "choices": [{"index": 0, "logprobs": None, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text, "refusal": None,
                                 "annotations": []}}],
        "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29},
        "service_tier": "default", "system_fingerprint": "fp_b376dfbbd5",
    }


def embedding(text: str, dimension: int) -> list[float]:
    """A unit vector of ``dimension`` for ``text``: its words hashed into buckets (texts
    sharing words are near)."""
    vector = [0.0] * dimension
    for word in text.lower().split():
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dimension] += 1.0
    norm = sum(v * v for v in vector) ** 0.5 or 1.0
    return [v / norm for v in vector]


class FakeOpenAI:
    """Answers POST /v1/chat/completions with ``answer(prompt)``; records every request body
    (``requests``). POST /v1/embeddings answers vectors of ``embed_dimension`` (``embedding``),
    recorded apart (``embeddings``).

    ``delay_s`` makes each answer that late (a provider slower than the search's budget)."""

    def __init__(self, answer: Callable[[str], str], delay_s: float = 0.0,
                 embed_dimension: int = 64):
        self.answer = answer
        self.delay_s = delay_s
        self.requests: list[dict] = []
        self.embeddings: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path.endswith("/embeddings"):
                    fake.embeddings.append({"path": self.path, "body": body})
                    data = json.dumps({"object": "list", "model": body["model"], "data": [
                        {"object": "embedding", "index": n,
                         "embedding": embedding(text, embed_dimension)}
                        for n, text in enumerate(body["input"])]}).encode()
                else:
                    fake.requests.append({"path": self.path, "body": body})
                    if fake.delay_s:
                        time.sleep(fake.delay_s)
                    prompt = body["messages"][-1]["content"]
                    data = json.dumps(completion(fake.answer(prompt))).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass                  # the client gave up waiting (a timeout test)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The API root to put in compile.base_url."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "FakeOpenAI":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
