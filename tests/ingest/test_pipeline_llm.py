"""run_ingest with an LLM provider (the fake one): calls, failures, concurrency, cache keys."""

import re
import threading
import time

import pytest

from mindgraph.config import load_settings
from mindgraph.errors import ProviderError, TransientProviderError
from mindgraph.ingest import STATE_FILENAME, IngestState, run_ingest
from mindgraph.providers.llm.base import call_with_retries
from mindgraph.providers.llm.fake import FakeLLMProvider


def rewrite(system, prompt):
    """A well-behaved model: a page whose body rephrases the raw note."""
    body = prompt.split("<<<NOTE\n", 1)[1].split("\nNOTE>>>", 1)[0]
    path = re.search(r"Note path: (.*)", prompt).group(1)
    return (f"---\ntitle: Page for {path}\ntype: note\ntags: [rewritten]\n---\n"
            f"> [!summary]\n> About {path}.\n\n## Content\n\nIn other words: {body.upper()}\n")


def fill(write_raw, n=6):
    for i in range(n):
        write_raw(f"n{i}.md", f"Note number {i} has some text.")


def test_llm_ingest_then_rerun_makes_zero_calls(workspace, settings, write_raw):
    fill(write_raw)
    provider = FakeLLMProvider(rewrite)
    first = run_ingest(settings, provider=provider)
    assert (first.ingested, first.provider_calls, provider.calls) == (6, 6, 6)
    assert first.compiler == "fake:fake-1:prompt-v2"
    second = run_ingest(settings, provider=provider)
    assert (second.ingested, second.skipped, second.provider_calls) == (0, 6, 0)
    assert provider.calls == 6


def test_a_failed_call_fails_only_its_file_and_is_retried(workspace, settings, write_raw):
    fill(write_raw)
    broken = {"n2.md", "n4.md"}

    def flaky(system, prompt):
        if re.search(r"Note path: (.*)", prompt).group(1) in broken:
            raise ProviderError("HTTP 500 after retries")
        return rewrite(system, prompt)

    report = run_ingest(settings, provider=FakeLLMProvider(flaky))
    assert (report.ingested, report.failed) == (4, 2)
    assert {f.path for f in report.by_status("failed")} == broken
    assert all("HTTP 500" in f.reason for f in report.by_status("failed"))
    records = IngestState.load(settings.state_dir / STATE_FILENAME).files
    assert {p for p, r in records.items() if r.status == "failed"} == broken
    broken.clear()
    retry = FakeLLMProvider(flaky)
    report = run_ingest(settings, provider=retry)
    assert (report.ingested, report.failed, retry.calls) == (2, 0, 2)


def test_invalid_model_output_fails_the_file(workspace, settings, write_raw):
    write_raw("copy.md", "Line one of the note.\nLine two of the note.")
    write_raw("ok.md", "Another note.")

    def copier(system, prompt):
        if "copy.md" in prompt:
            return "---\ntitle: Copy\n---\nLine one of the note.\nLine two of the note.\n"
        return rewrite(system, prompt)

    report = run_ingest(settings, provider=FakeLLMProvider(copier))
    assert [f.path for f in report.by_status("failed")] == ["copy.md"]
    assert "near-verbatim copy" in report.by_status("failed")[0].reason
    assert not (workspace / "wiki" / "copy.md").exists()


def test_calls_run_concurrently_within_the_configured_bound(workspace, write_raw):
    (workspace / "mindgraph.yml").write_text("compile:\n  concurrency: 3\n")
    settings = load_settings(workspace)
    fill(write_raw, 9)
    lock = threading.Lock()
    active = {"now": 0, "max": 0}

    def slow(system, prompt):
        with lock:
            active["now"] += 1
            active["max"] = max(active["max"], active["now"])
        time.sleep(0.05)
        with lock:
            active["now"] -= 1
        return rewrite(system, prompt)

    report = run_ingest(settings, provider=FakeLLMProvider(slow))
    assert report.ingested == 9
    assert active["max"] == 3


def test_changing_the_model_recompiles(workspace, settings, write_raw):
    fill(write_raw, 3)
    run_ingest(settings, provider=FakeLLMProvider(rewrite, model="a"))
    other = FakeLLMProvider(rewrite, model="b")
    report = run_ingest(settings, provider=other)
    assert (report.ingested, other.calls) == (3, 3)
    assert "generator: fake:b:prompt-v2" in (workspace / "wiki" / "n0.md").read_text()


def test_changing_language_or_domain_recompiles(workspace, settings, write_raw):
    fill(write_raw, 3)
    write_raw("ja.md", "# 日本語のノート\nこれは日本語で書かれたノートです。")
    first = FakeLLMProvider(rewrite)
    run_ingest(settings, provider=first)
    assert first.calls == 4
    ja_prompt = next(p for p in first.prompts if "Note path: ja.md" in p)
    assert "Write in Japanese, the language of the note." in ja_prompt
    again = FakeLLMProvider(rewrite)
    assert run_ingest(settings, provider=again).skipped == 4 and again.calls == 0
    for yml in ("compile:\n  language: English\n",
                "compile:\n  language: English\n  domain: gardening\n"):
        (workspace / "mindgraph.yml").write_text(yml)
        changed = FakeLLMProvider(rewrite)
        report = run_ingest(load_settings(workspace), provider=changed)
        assert (report.ingested, changed.calls) == (4, 4)
        assert all("Write in English, whatever the language" in p for p in changed.prompts)
        unchanged = FakeLLMProvider(rewrite)
        assert run_ingest(load_settings(workspace), provider=unchanged).skipped == 4
        assert unchanged.calls == 0


def test_transient_errors_are_retried_by_the_provider_policy(workspace, settings, write_raw):
    write_raw("a.md", "Text of a.")
    attempts = []

    def once():
        attempts.append(1)
        if len(attempts) < 3:
            raise TransientProviderError("HTTP 429")
        return rewrite("", "Note path: a.md\n<<<NOTE\nText of a.\nNOTE>>>")

    provider = FakeLLMProvider(lambda s, p: call_with_retries(once, sleep=lambda _: None))
    report = run_ingest(settings, provider=provider)
    assert report.ingested == 1 and len(attempts) == 3


def alias_bomb(levels=9):
    """~600 bytes of YAML that expands to 9**levels values: each level repeats the last 9x."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        refs = ", ".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines)


@pytest.mark.timeout(30)
def test_a_yaml_alias_bomb_in_the_answer_fails_only_its_note(workspace, settings, write_raw):
    write_raw("bomb.md", "A note that makes the model answer with an alias bomb.")
    write_raw("ok.md", "Another note.")

    def bomber(system, prompt):
        if "bomb.md" in prompt:
            return (f"---\ntitle: Bomb\n{alias_bomb()}\ntags: *a8\n---\n"
                    f"## Body\n\nSomething rewritten.\n")
        return rewrite(system, prompt)

    report = run_ingest(settings, provider=FakeLLMProvider(bomber))
    assert report.ingested == 1 and [f.path for f in report.by_status("failed")] == ["bomb.md"]
    reason = report.by_status("failed")[0].reason
    assert "bomb.md" in reason and "aliases" in reason
    assert not (workspace / "wiki" / "bomb.md").exists()
