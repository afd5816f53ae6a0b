"""The LLM compiler: a rewrite prompt, and validation of what the model returns.

The model writes the page shape of render.py; its answer is parsed once, here, at the
boundary. An empty answer, frontmatter that does not parse, a missing title, or a body that is
a near-verbatim copy of the raw note (line similarity above 0.95) fails that note only: it is
marked failed and retried on the next run. Dates, sources and the compiler identity are never
taken from the model. Wikilinks to other pages are then added by the same deterministic pass
as the offline compiler.

The page is written in ``compile.language``; the default, ``auto``, is each note's own language
(read from the scripts of its letters: Japanese, Chinese, Korean by name, else "the language
of the note"). Everything that shapes a prompt (templates, limits, language, domain) is in
``key_identity``, so changing any of it recompiles.

Large notes are split, never truncated: a body longer than ``CHUNK_CHARS`` is cut at H2
headings (then blank lines, then line ends; never inside fenced code unless one block alone is
too large) and each part is rewritten by its own call; the parts are joined in order.
"""

from __future__ import annotations

import difflib
import json
import re
import threading
from typing import Any

import yaml

from ..config import Settings
from ..errors import IngestError, MindgraphError
from ..fsutil import sha256_text
from ..page.language import text_language
from ..page.markdown import split_frontmatter
from ..page.yaml_read import YAMLLimitError, load_yaml
from .extract import outline, summary as extractive_summary
from .index import TitleIndex
from .linker import add_links
from .normalise import code_mask, heading_of, normalise_body
from .render import CompiledPage, NoteInput, dedupe, page_frontmatter, render_page

PROMPT_VERSION = "2"
CHUNK_CHARS = 24_000
MAX_TOKENS = 8192
VERBATIM_SIMILARITY = 0.95
PAGE_TYPES = ("note", "concept", "howto", "reference", "troubleshooting", "decision", "log",
              "index")
AUTO_LANGUAGE = "auto"
LANGUAGE_NAMES = {"en": "English", "ja": "Japanese", "zh": "Chinese", "ko": "Korean",
                  "de": "German", "fr": "French", "es": "Spanish", "it": "Italian",
                  "pt": "Portuguese", "ru": "Russian"}
# text_language cannot tell English from French ("en" is any Latin script): name only these.
DETECTED_NAMES = {"ja": "Japanese", "zh": "Chinese", "ko": "Korean"}
NOTE_LANGUAGE = "the language of the note"

SYSTEM_PROMPT = """You compile a person's raw notes into pages of their personal wiki{domain}.
A page must stand on its own for a reader who never saw the note: clear structure, every fact
kept, nothing invented. Write in {language}."""

PAGE_PROMPT = """Rewrite the raw note below as one wiki page.

Return only the page, in exactly this shape, with no code fence around it:
---
title: <a short title naming the subject>
type: <one of: {types}>
tags: [<3 to 8 short lower-case tags, words joined with hyphens>]
aliases: [<other names the subject goes by; may be empty>]
related: [<titles of other pages this one builds on or relates to; may be empty>]
---
> [!summary]
> <one to three sentences saying what the page is about>

<the body: sections under ## and ### headings, never a # heading>

Rules:
- Keep every fact, number, name, date, command, URL and link of the note. Invent nothing.
- Copy fenced code blocks and [[wikilinks]] exactly as they are written.
- Reorganise and rephrase for a reader new to the note; do not copy it sentence by sentence.
- Write in {language}{whatever}.
{part}
Note path: {path}
Note frontmatter:
{frontmatter}
Raw note:
<<<NOTE
{body}
NOTE>>>
"""

CONTINUE_PROMPT = """This is part {index} of {count} of a long note whose page is already
begun. Rewrite only this part as the continuation of the page body, following the same rules:
keep every fact, code block and [[wikilink]] exactly, invent nothing, write in {language}.
Return only body text with ## and ### headings: no frontmatter, no summary, no code fence
around the answer.

Note path: {path}
Part {index} of {count}:
<<<NOTE
{body}
NOTE>>>
"""


class LLMCompiler:
    """Compiles notes with an LLMProvider; safe to call from several threads at once."""

    commit_interval_s = 0.0     # every result costs a call: save the state after each file
    links_in_key = False        # relinking must not cost calls; links are refreshed on change

    def __init__(self, provider: Any, settings: Settings):
        self.provider = provider
        self.language = settings.compile.language.strip() or AUTO_LANGUAGE
        self.domain = settings.compile.domain
        self.concurrency = settings.compile.concurrency
        self.identity = f"{provider.identity}:prompt-v{PROMPT_VERSION}"
        shaping = [SYSTEM_PROMPT, PAGE_PROMPT, CONTINUE_PROMPT, CHUNK_CHARS, MAX_TOKENS,
                   PAGE_TYPES, DETECTED_NAMES, self.language, self.domain]
        digest = sha256_text(json.dumps(shaping, ensure_ascii=False, sort_keys=True))
        self.key_identity = f"{self.identity}:{digest[:16]}"
        self.calls = 0
        self._lock = threading.Lock()

    def language_for(self, note: NoteInput) -> str:
        """The language the page is written in: ``compile.language``, or with ``auto`` the
        note's own (by name for Japanese, Chinese and Korean)."""
        if self.language.lower() != AUTO_LANGUAGE:
            return LANGUAGE_NAMES.get(self.language.lower(), self.language)
        detected = text_language(note.page.title + "\n" + note.page.body)
        return DETECTED_NAMES.get(detected, NOTE_LANGUAGE)

    def system_prompt(self, language: str) -> str:
        """The system prompt (domain from mindgraph.yml, language from ``language_for``)."""
        domain = f" about {self.domain}" if self.domain else ""
        return SYSTEM_PROMPT.format(domain=domain, language=language)

    def compile(self, note: NoteInput, index: TitleIndex) -> CompiledPage:
        """Rewrite one note; IngestError (naming the file) if a call or its answer fails."""
        page = note.page
        parts = split_body(page.body.strip("\n"), CHUNK_CHARS)
        fm_text = yaml.safe_dump(dict(page.frontmatter), sort_keys=False, allow_unicode=True,
                                 width=10_000).strip() if page.frontmatter else "(none)"
        part_note = (f"\nThe note is long: this is part 1 of {len(parts)}; rewrite this part "
                     f"only, later parts follow.\n" if len(parts) > 1 else "")
        language = self.language_for(note)
        if self.language.lower() != AUTO_LANGUAGE:
            whatever = ", whatever the language of the note"
        else:
            whatever = "" if language == NOTE_LANGUAGE else ", the language of the note"
        first = self._call(note, language, PAGE_PROMPT.format(
            types=", ".join(PAGE_TYPES), language=language, whatever=whatever, part=part_note,
            path=note.path, frontmatter=fm_text, body=parts[0] if parts else ""))
        meta, summary_text, body = parse_answer(first, note.path)
        bodies = [body]
        for number, part in enumerate(parts[1:], start=2):
            answer = self._call(note, language, CONTINUE_PROMPT.format(
                index=number, count=len(parts), language=language, path=note.path,
                body=part))
            bodies.append(parse_continuation(answer, note.path, number))
        body = "\n\n".join(b.strip("\n") for b in bodies)
        check_not_verbatim(body, page.body, note.path)
        return CompiledPage(note.wiki_path, self._assemble(note, index, meta, summary_text,
                                                           body))

    def _call(self, note: NoteInput, language: str, prompt: str) -> str:
        with self._lock:
            self.calls += 1
        try:
            return self.provider.complete(self.system_prompt(language), prompt,
                                          max_tokens=MAX_TOKENS)
        except MindgraphError as exc:
            raise IngestError(f"{note.path}: {self.provider.identity} call failed: {exc}") \
                from exc

    def _assemble(self, note: NoteInput, index: TitleIndex, meta: dict[str, Any],
                  summary_text: str, body: str) -> str:
        page = note.page
        title = _string(meta.get("title")) or page.title
        body = normalise_body(body, title)
        existing = set()
        for link in page.links:
            target = index.resolver.resolve_target(link.target, note.wiki_path).target \
                if not (link.is_attachment or link.is_self) else None
            if target:
                existing.add(target)
        related = []
        for name in _strings(meta.get("related")):
            # Only pages that exist: a model may name pages the vault does not have.
            target = index.target(name.strip("[]").split("|")[0], note.wiki_path)
            if target and target != note.wiki_path:
                existing.add(target)
                related.append(f"[[{index.link_target(target, note.wiki_path)}]]")
        body, _ = add_links(body, note.wiki_path, index, existing)
        type_ = _string(meta.get("type")).lower()
        tags = list(page.tags) + [re.sub(r"\s+", "-", t.strip().lstrip("#"))
                                  for t in _strings(meta.get("tags"))]
        fm = page_frontmatter(note, title=title, type_=type_ if type_ in PAGE_TYPES else "note",
                              tags=tags, aliases=list(page.aliases) + _strings(meta.get("aliases")),
                              dates=note.dates(), compiler=self.identity,
                              origin="ai_generated", extra={"related": dedupe(related)} if related else None)
        summary_text = summary_text or extractive_summary(body) or outline(body)
        return render_page(fm, summary_text, body)


def parse_answer(answer: str, path: str) -> tuple[dict[str, Any], str, str]:
    """(frontmatter, summary, body) of a model's page; IngestError says what is wrong."""
    text = _unfence(answer)
    if not text.strip():
        raise IngestError(f"{path}: the model returned an empty page; will retry next run.")
    block, body, _ = split_frontmatter(text.lstrip())
    if block is None:
        raise IngestError(f"{path}: the model's page has no frontmatter (it must start with "
                          f"'---'); will retry next run.")
    try:
        meta = load_yaml(block, "the model's frontmatter")
    except YAMLLimitError as exc:       # names the field and its line
        raise IngestError(f"{path}: the model's frontmatter at line "
                          f"{exc.problem_mark.line + 2}: {exc.problem} Will retry next "
                          f"run.") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise IngestError(f"{path}: the model's frontmatter is not valid YAML{where} "
                          f"({getattr(exc, 'problem', exc)}); will retry next run.") from exc
    if not isinstance(meta, dict) or not _string(meta.get("title")):
        raise IngestError(f"{path}: the model's frontmatter has no title; will retry next run.")
    summary_text, body = _split_summary(body)
    if not body.strip() and not summary_text:
        raise IngestError(f"{path}: the model's page has an empty body; will retry next run.")
    return {str(k): v for k, v in meta.items()}, summary_text, body


def parse_continuation(answer: str, path: str, number: int) -> str:
    """The body text of a continuation answer (stray frontmatter dropped)."""
    text = _unfence(answer)
    block, body, _ = split_frontmatter(text.lstrip())
    body = body if block is not None else text
    if not body.strip():
        raise IngestError(f"{path}: the model returned an empty answer for part {number}; "
                          f"will retry next run.")
    return body


def check_not_verbatim(body: str, raw_body: str, path: str) -> None:
    """IngestError when the rewritten body is (nearly) the raw body copied."""
    ratio = similarity(body, raw_body)
    if ratio > VERBATIM_SIMILARITY:
        raise IngestError(f"{path}: the model's page is a near-verbatim copy of the raw note "
                          f"(similarity {ratio:.2f} > {VERBATIM_SIMILARITY}); a wiki page must "
                          f"be a rewrite. Will retry next run.")


def similarity(a: str, b: str) -> float:
    """Line-level similarity of two texts, whitespace-insensitive (0..1)."""
    la = [" ".join(line.split()) for line in a.split("\n") if line.strip()]
    lb = [" ".join(line.split()) for line in b.split("\n") if line.strip()]
    if not la and not lb:
        return 1.0
    return difflib.SequenceMatcher(None, la, lb, autojunk=False).ratio()


def split_body(body: str, limit: int) -> list[str]:
    """Cut ``body`` into parts of at most ``limit`` characters, in order, dropping nothing.

    Cuts fall before H2 headings, else at blank lines, else at line ends; never inside fenced
    code unless one code block alone is over the limit. Joining the parts with a newline
    gives the body back (a single line longer than the limit is itself cut in pieces).
    """
    if len(body) <= limit:
        return [body] if body else []
    lines = body.split("\n")
    in_code = code_mask(lines)
    blocks: list[list[str]] = [[]]
    for i, line in enumerate(lines):
        heading = None if in_code[i] else heading_of(line)
        boundary = (heading is not None and heading[0] <= 2) or \
            (not in_code[i] and not line.strip())
        if boundary and blocks[-1]:
            blocks.append([])
        blocks[-1].append(line)
    parts: list[str] = []
    current: list[str] = []
    for block in blocks:
        text = "\n".join(block)
        if len(text) > limit:
            if current:
                parts.append("\n".join(current))
                current = []
            parts.extend(_hard_split(block, limit))
            continue
        if current and len("\n".join(current)) + 1 + len(text) > limit:
            parts.append("\n".join(current))
            current = []
        current.extend(block)
    if current:
        parts.append("\n".join(current))
    return parts


def _hard_split(lines: list[str], limit: int) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    size = 0
    for line in lines:
        while len(line) > limit:   # one enormous line: cut it, never drop it
            if current:
                parts.append("\n".join(current))
                current, size = [], 0
            parts.append(line[:limit])
            line = line[limit:]
        if current and size + 1 + len(line) > limit:
            parts.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    if current:
        parts.append("\n".join(current))
    return parts


def _unfence(answer: str) -> str:
    """Drop a code fence wrapped around the whole answer (models add them)."""
    text = answer.strip()
    match = re.fullmatch(r"```[\w-]*\n(.*)\n```", text, re.S)
    return match.group(1) if match else text


def _split_summary(body: str) -> tuple[str, str]:
    lines = body.strip("\n").split("\n")
    if not lines or not re.match(r"^>\s*\[!summary\]", lines[0], re.I):
        return "", body
    first = re.sub(r"^>\s*\[!summary\][-+]?\s*", "", lines[0], flags=re.I).strip()
    collected = [first] if first else []
    end = 1
    while end < len(lines) and lines[end].startswith(">"):
        collected.append(lines[end][1:].strip())
        end += 1
    return " ".join(c for c in collected if c), "\n".join(lines[end:])


def _string(value: Any) -> str:
    return str(value).strip() if isinstance(value, (str, int, float)) else ""


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)):
        out = []
        for item in value:
            if isinstance(item, list):   # an unquoted [[Title]] in YAML is a nested list
                out.extend(_strings(item))
            elif isinstance(item, (str, int, float)) and str(item).strip():
                out.append(str(item).strip())
        return out
    return []
