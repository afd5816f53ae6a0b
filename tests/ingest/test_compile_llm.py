"""The LLM compiler: prompt, validation of the model's page, splitting of large notes."""

import pytest
import yaml

from mindgraph.config import settings_from_dict
from mindgraph.errors import IngestError, ProviderError
from mindgraph.fsutil import sha256_text
from mindgraph.ingest.compile_llm import LLMCompiler, split_body
from mindgraph.ingest.index import IndexEntry, TitleIndex
from mindgraph.ingest.render import NoteInput
from mindgraph.page.markdown import split_frontmatter
from mindgraph.page.parse import parse_page
from mindgraph.providers.llm.fake import FakeLLMProvider

RAW = """---
aliases: [NC]
---
# Note composer
Note composer merges notes. It can also extract a selection into a new note.

## Merge
Pick the note to merge into and confirm.
"""

GOOD = """---
title: Note composer
type: howto
tags: [merging, Core Plugin]
aliases: [Composer]
related: ["[[Canvas]]", "Nowhere page"]
---
> [!summary]
> A core plugin to merge and split notes.

## What it does
It merges two notes into one, or extracts a selection into a new note; see Canvas too.

## Merging
Choose the destination note, then confirm the merge.
"""


def settings(**compile_opts):
    return settings_from_dict({"compile": {"language": "de", "domain": "note taking",
                                           **compile_opts}})


def note(raw=RAW, path="Note composer.md"):
    return NoteInput(path, path, raw, sha256_text(raw), 1_700_000_000, parse_page(raw, path))


def index():
    return TitleIndex([IndexEntry("Note composer.md", "Note composer"),
                       IndexEntry("Canvas.md", "Canvas")])


def compile_with(answer, raw=RAW):
    provider = FakeLLMProvider(answer if callable(answer) else lambda s, p: answer)
    compiler = LLMCompiler(provider, settings())
    return compiler, compiler.compile(note(raw), index()).text


def test_valid_answer_becomes_a_page_with_our_sources_and_dates():
    compiler, text = compile_with(GOOD)
    meta = yaml.safe_load(split_frontmatter(text)[0])
    assert meta["title"] == "Note composer" and meta["type"] == "howto"
    assert meta["tags"] == ["merging", "Core-Plugin"]
    assert meta["aliases"] == ["NC", "Composer"]
    assert meta["related"] == ["[[Canvas]]"]          # unknown pages are dropped
    assert meta["provenance"] == {
        "origin": "ai_generated", "generator": "fake:fake-1:prompt-v2",
        "sources": [{"path": "Note composer.md", "sha256": sha256_text(RAW)}]}
    assert compiler.identity == "fake:fake-1:prompt-v2"
    # the raw note has no date: its file time (2023-11-14) is not one
    assert not {"created", "updated", "date_source"} & set(meta)
    body = split_frontmatter(text)[1]
    assert "> [!summary]\n> A core plugin to merge and split notes." in body
    assert "see Canvas too" in body            # related: already links it
    assert compiler.calls == 1


def test_prompt_carries_language_domain_and_the_whole_note():
    provider = FakeLLMProvider(lambda s, p: GOOD)
    compiler = LLMCompiler(provider, settings())
    compiler.compile(note(), index())
    system = compiler.system_prompt(compiler.language_for(note()))
    assert "about note taking" in system and "Write in German." in system
    assert "Pick the note to merge into and confirm." in provider.prompts[0]
    assert "Write in German, whatever the language of the note." in provider.prompts[0]


JA_RAW = "# ノートの統合\nノートコンポーザーは二つのノートを一つにまとめます。\n"


def test_by_default_a_page_is_written_in_its_notes_language():
    provider = FakeLLMProvider(lambda s, p: GOOD)
    compiler = LLMCompiler(provider, settings_from_dict({}))
    assert compiler.language == "auto"
    compiler.compile(note(JA_RAW, "統合.md"), index())
    assert "Write in Japanese, the language of the note." in provider.prompts[0]
    assert "Write in Japanese." in compiler.system_prompt(compiler.language_for(note(JA_RAW)))
    assert "English" not in provider.prompts[0]
    compiler.compile(note(), index())
    assert "Write in the language of the note." in provider.prompts[1]


def test_language_and_domain_are_in_the_compile_key():
    provider = FakeLLMProvider(lambda s, p: GOOD)
    keys = {LLMCompiler(provider, settings_from_dict({"compile": opts})).key_identity
            for opts in ({}, {"language": "ja"}, {"domain": "cooking"},
                         {"language": "ja", "domain": "cooking"})}
    assert len(keys) == 4
    same = LLMCompiler(provider, settings_from_dict({})).key_identity
    assert same in keys and same.startswith("fake:fake-1:prompt-v2:")


def test_answer_wrapped_in_a_code_fence_is_accepted():
    _, text = compile_with("```markdown\n" + GOOD + "\n```")
    assert yaml.safe_load(split_frontmatter(text)[0])["title"] == "Note composer"


@pytest.mark.parametrize("answer, message", [
    ("", "empty page"),
    ("   \n", "empty page"),
    ("## Just a body\ntext", "no frontmatter"),
    ("---\ntitle: [unclosed\n---\nbody", "frontmatter is not valid YAML at line"),
    ("---\ntype: note\n---\nbody text", "has no title"),
    ("---\ntitle: x\n---\n", "empty body"),
])
def test_invalid_answers_fail_the_note(answer, message):
    with pytest.raises(IngestError, match=message) as info:
        compile_with(answer)
    assert str(info.value).startswith("Note composer.md: ")


def test_verbatim_copy_of_the_raw_note_fails():
    copy = "---\ntitle: Note composer\n---\n" + parse_page(RAW, "x.md").body
    with pytest.raises(IngestError, match=r"near-verbatim copy .*similarity 1.00"):
        compile_with(copy)


def test_a_failing_provider_call_fails_the_note_with_its_reason():
    def boom(system, prompt):
        raise ProviderError("HTTP 401: bad key")

    with pytest.raises(IngestError, match=r"Note composer.md: fake:fake-1 call failed: "
                                          r"HTTP 401: bad key"):
        compile_with(boom)


def test_split_body_drops_nothing_and_keeps_code_blocks_whole():
    code = "```\n" + "\n".join(f"line {i}" for i in range(40)) + "\n```"
    sections = [f"## Part {i}\n\n" + ("Some prose here. " * 30) + "\n\n" + code
                for i in range(12)]
    body = "Intro text.\n\n" + "\n\n".join(sections)
    parts = split_body(body, 2000)
    assert len(parts) > 5
    assert "\n".join(parts) == body
    assert all(len(p) <= 2000 for p in parts)
    assert all(p.count("```") % 2 == 0 for p in parts)
    assert split_body("short", 2000) == ["short"]
    huge_line = "x" * 5000
    assert "".join(split_body(huge_line, 2000)) == huge_line


def test_large_note_is_split_into_several_calls_never_truncated(monkeypatch):
    monkeypatch.setattr("mindgraph.ingest.compile_llm.CHUNK_CHARS", 500)
    sections = "\n\n".join(f"## Section {i}\n\n" + f"Fact number {i} is stated here. " * 8
                           for i in range(6))
    raw = "# Big\n\n" + sections

    def respond(system, prompt):
        body = prompt.split("<<<NOTE\n", 1)[1].split("\nNOTE>>>", 1)[0]
        rewritten = body.replace("is stated here", "holds")
        if "Return only the page" in prompt:
            return "---\ntitle: Big\n---\n> [!summary]\n> Facts.\n\n" + rewritten
        return rewritten

    compiler, text = compile_with(respond, raw)
    assert compiler.calls > 1
    for i in range(6):
        assert f"Fact number {i} holds." in text
