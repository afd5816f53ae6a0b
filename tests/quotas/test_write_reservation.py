"""A document write takes its LLM call before it stores anything (quotas/reserve.py).

Before, the write only checked that a call was left: two writes at once both passed, both
stored their note, and the second's compile failed on the quota — a note stored but never
searchable. Now the check and the charge are one ledger transaction: of writes racing for
the last calls, those past the quota are 429 with nothing stored. A real `mindgraph serve
--workers 2` (one process writes one at a time: the race is between the processes, which
share the counts), six writes at once, a local server speaking OpenAI's API that counts the
completions it is asked for and answers each after 0.5 s (so the writes overlap). The
writes of the two processes also take turns compiling (documents/service.py ``_in_turn``):
before, the second one's compile was refused (409) with its note stored.
"""

import concurrent.futures as cf
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "retrieval"))
sys.path.insert(0, str(Path(__file__).parents[1] / "scopes"))
from fake_openai import FakeOpenAI  # noqa: E402
from live_server import free_port, stop, wait_healthy  # noqa: E402
from scopes_support import SERVER_TOKEN, TOKENS, config_text, token_env, \
    write_workspace  # noqa: E402

from mindgraph.config import LimitsSettings  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.errors import QuotaExceeded  # noqa: E402
from mindgraph.providers.llm.base import before_call  # noqa: E402
from mindgraph.quotas import Quotas, charged_to, llm_calls_reserved  # noqa: E402
from mindgraph.scopes import Identity  # noqa: E402

PAGE = ("---\ntitle: {title}\ntype: note\ntags: [plan]\naliases: []\nrelated: []\n---\n"
        "> [!summary]\n> What the plan says.\n\n## The plan\n\nRewritten for a reader: "
        "ship the merger memo review by Friday.\n")


def _page(prompt: str) -> str:
    title = prompt.split("title: ", 1)[1].split("\n", 1)[0] if "title: " in prompt else "Plan"
    return PAGE.format(title=title.strip("'\""))


def test_concurrent_writes_past_the_llm_quota_are_refused_before_storing(tmp_path):
    write_workspace(tmp_path)
    env = {**os.environ, "MINDGRAPH_API_TOKEN": SERVER_TOKEN,
           **{token_env(name): token for name, token in TOKENS.items()}}
    core = Mindgraph.open(tmp_path)
    assert core.ingest().ok
    core.close()
    with FakeOpenAI(_page, delay_s=0.5) as llm:
        (tmp_path / "mindgraph.yml").write_text(
            config_text() + f"compile:\n  provider: openai\n  model: fake-model\n"
                            f"  base_url: {llm.base_url}\n  max_retries: 0\n"
                            f"limits:\n  llm_calls_per_hour: 2\n")
        port = free_port()
        log = tmp_path / "serve.log"
        server = subprocess.Popen([sys.executable, "-m", "mindgraph", "serve", "-C",
                                   str(tmp_path), "--port", str(port), "--workers", "2"],
                                  stdout=subprocess.DEVNULL, stderr=log.open("wb"), env=env)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_healthy(server, base)

            def write(n: int) -> httpx.Response:
                with httpx.Client(base_url=base, timeout=60) as http:
                    return http.post("/documents", json={"title": f"Carol plan {n}",
                                                         "text": "Ship the memo review."},
                                     headers={"Authorization": f"Bearer {TOKENS['carol']}"})

            with cf.ThreadPoolExecutor(6) as pool:
                answers = list(pool.map(write, range(6)))
            with httpx.Client(base_url=base, timeout=60) as http:
                erin = http.post("/documents", json={"title": "Erin plan", "text": "Mine."},
                                 headers={"Authorization": f"Bearer {TOKENS['erin']}"})
        finally:
            stop(server)
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200, 200, 429, 429, 429, 429], \
        "\n".join(a.text for a in answers) + "\n" + log.read_text()[-4000:]
    made = [a.json() for a in answers if a.status_code == 200]
    assert all(m["searchable"] and m["compile"]["status"] == "ingested" for m in made), made
    for refused in (a for a in answers if a.status_code == 429):
        assert refused.json()["setting"] == "limits.llm_calls_per_hour"
        assert 1 <= int(refused.headers["Retry-After"]) <= 3600
    notes = tmp_path / "raw/globex/personal/carol/api-notes"
    assert sorted(p.name for p in notes.iterdir()) == sorted(Path(m["raw"]).name for m in made)
    assert erin.status_code == 200, erin.text           # another identity, its own quota
    assert len(llm.requests) == 3                       # carol's two compiles, erin's one


CAROL = Identity(name="carol", tenant="globex", agent="carol")


def _llm_rows(quotas: Quotas) -> int:
    import sqlite3

    with sqlite3.connect(quotas.ledger.path) as db:
        return db.execute("SELECT count(*) FROM events WHERE kind = 'llm_calls'").fetchone()[0]


def test_a_reservation_is_given_back_unless_the_compile_called_the_llm(tmp_path):
    quotas = Quotas(LimitsSettings(llm_calls_per_hour=3), tmp_path)
    with charged_to(quotas, CAROL):
        with llm_calls_reserved(2):             # a write whose compile was cached: no call
            assert _llm_rows(quotas) == 2
        assert _llm_rows(quotas) == 0
        with llm_calls_reserved(1):
            before_call()                       # the compile's call spends the reserved one
            assert _llm_rows(quotas) == 1
            before_call()                       # a second one is taken as any call
            assert _llm_rows(quotas) == 2
        assert _llm_rows(quotas) == 2           # both were made: both stay counted
        with pytest.raises(QuotaExceeded) as refused:
            with llm_calls_reserved(2):         # 2 more do not fit a quota of 3 with 2 used
                raise AssertionError("the block must not run")
        assert refused.value.setting == "limits.llm_calls_per_hour"
        assert _llm_rows(quotas) == 2           # refused whole: none taken
