"""Triage's LLM judge over REST with a token: each call counts against the caller's
``limits.llm_calls_per_hour``; a used-up quota is a 429 before the provider is called, where
before the batch silently went to the offline score with the LLM asked again every time."""

import json
import sys
from pathlib import Path

from click.testing import CliRunner
from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).parents[1] / "retrieval"))
sys.path.insert(0, str(Path(__file__).parents[1] / "triage"))
from fake_openai import FakeOpenAI  # noqa: E402
from test_triage import CATALOG, ITEMS  # noqa: E402

from mindgraph.cli import cli  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.serve.rest import create_app  # noqa: E402

TOKEN = "carol-" + "t" * 40
CONFIG = ("embedding:\n  provider: hashing\n  dimension: 256\nscopes:\n  identities:\n"
          "    - {name: carol, tenant: globex, agent: carol, token_env: MG_QUOTA_CAROL}\n")


def _verdicts(prompt: str) -> str:
    return json.dumps({"items": [{"n": n, "trunk": "Garden", "score": 2, "reason": "beds"}
                                 for n in range(1, prompt.count("Item ") + 1)]})


def test_triage_llm_calls_stop_at_the_quota(tmp_path, monkeypatch):
    monkeypatch.setenv("MG_QUOTA_CAROL", TOKEN)
    shared = tmp_path / "raw" / "globex" / "shared"
    (shared / "Tasks").mkdir(parents=True)
    (shared / "Trunk Catalog.md").write_text(CATALOG, encoding="utf-8")
    for name, text in ITEMS.items():
        (shared / name).write_text(text, encoding="utf-8")
    (tmp_path / "mindgraph.yml").write_text(CONFIG, encoding="utf-8")
    assert CliRunner().invoke(cli, ["-C", str(tmp_path), "ingest"]).exit_code == 0
    with FakeOpenAI(_verdicts) as llm:
        (tmp_path / "mindgraph.yml").write_text(
            CONFIG + f"compile:\n  provider: openai\n  model: fake-model\n  base_url: "
                     f"{llm.base_url}\nlimits:\n  llm_calls_per_hour: 1\n", encoding="utf-8")
        core = Mindgraph.open(tmp_path)
        with TestClient(create_app(core), base_url="http://127.0.0.1:8765") as client:
            ask = {"since": "2026-11-29", "judge": "auto"}
            bearer = {"Authorization": f"Bearer {TOKEN}"}
            first = client.get("/triage", params=ask, headers=bearer)
            assert first.status_code == 200, first.text
            assert len(llm.requests) == 1
            second = client.get("/triage", params=ask, headers=bearer)
        core.close()
    assert len(llm.requests) == 1
    assert second.status_code == 429, second.text
    assert second.json()["setting"] == "limits.llm_calls_per_hour"
    assert int(second.headers["Retry-After"]) >= 1
    judged = {i["title"]: i["judge"] for g in first.json()["trunks"] for i in g["items"]}
    assert judged and all(j.startswith("llm:openai") for j in judged.values())
