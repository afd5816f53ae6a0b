"""Agent-data notes: the fenced ```json or ```yaml block of a page, as structured data.

People read the prose; agents extract the block. One note, editable anywhere, consumed as data.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import MindgraphError, NotFoundError
from .model import Page
from .markdown import split_frontmatter
from .yaml_read import YAMLLimitError, load_yaml_documents
from .rawlines import raw_source, read_raw_note

FENCE_OPEN_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([A-Za-z0-9_+-]*)[^\n]*$")
DATA_LANGUAGES = {"json": "json", "yaml": "yaml", "yml": "yaml"}


@dataclass(frozen=True)
class DataBlock:
    """A fenced data block: its language, 1-based line of the opening fence, and text."""

    language: str
    line: int
    text: str


class DataBlockError(MindgraphError):
    """A data block exists but does not parse."""


def data_blocks(page: Page) -> list[DataBlock]:
    """Every fenced json/yaml block of the page, in order."""
    return _blocks(page.body, page.body_line)


def _blocks(body: str, body_line: int) -> list[DataBlock]:
    """Every fenced json/yaml block of a body whose first line is ``body_line``."""
    blocks = []
    lines = body.split("\n")
    i = 0
    while i < len(lines):
        match = FENCE_OPEN_RE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, language = match.group(1), match.group(2).lower()
        start = i
        i += 1
        content = []
        while i < len(lines) and not (lines[i].strip().startswith(fence[0] * len(fence))
                                       and not lines[i].strip().strip(fence[0])):
            content.append(lines[i])
            i += 1
        i += 1
        if language in DATA_LANGUAGES:
            blocks.append(DataBlock(DATA_LANGUAGES[language], body_line + start,
                                    "\n".join(content)))
    return blocks


def extract_data(page: Page, block: int = 1, language: str | None = None,
                 raw_dir: Path | None = None, raw_label: str = "raw") -> Any:
    """Parse the ``block``-th (1-based) data block, optionally only among one language.

    With ``raw_dir``, an error in a compiled page's block names the raw note's line (the
    note is what people edit), as `check` does.
    """
    blocks = [b for b in data_blocks(page)
              if language is None or b.language == DATA_LANGUAGES.get(language, language)]
    kind = f"```{language}" if language else "```json or ```yaml"
    if not blocks:
        raise NotFoundError(f"{page.path}: no {kind} block. Add a fenced block to the note, "
                            f"e.g. ```json {{\"key\": \"value\"}} ```.")
    if not 1 <= block <= len(blocks):
        raise NotFoundError(f"{page.path}: asked for block {block} but the page has "
                            f"{len(blocks)} {kind} block(s).")
    chosen = blocks[block - 1]

    def where(offset: int) -> str:
        return _where(page, chosen, offset, raw_dir, raw_label)

    try:
        if chosen.language == "json":
            return json.loads(chosen.text)
        # a block fenced like frontmatter (---) holds one document between empty ones
        documents = load_yaml_documents(chosen.text, "a data block")
        return documents[0] if len(documents) == 1 else documents or None
    except json.JSONDecodeError as exc:
        raise DataBlockError(f"{where(exc.lineno)}: the ```json block does "
                             f"not parse ({exc.msg}). Fix the JSON in the note.") from exc
    except RecursionError:      # json's parser recurses once a level: ~1,000 of them
        raise DataBlockError(f"{where(1)}: the ```json block nests too deeply for Python's "
                             f"JSON parser (about 1,000 levels). Flatten it.") from None
    except YAMLLimitError as exc:       # names the field and its line
        raise DataBlockError(f"{where(1 + exc.problem_mark.line)}: the ```yaml block's "
                             f"{exc.problem}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise DataBlockError(f"{where(1 + (mark.line if mark else 0))}: the ```yaml block "
                             f"does not parse ({getattr(exc, 'problem', exc)}). Fix the YAML in "
                             f"the note.") from exc


def _where(page: Page, chosen: DataBlock, offset: int, raw_dir: Path | None,
           raw_label: str) -> str:
    """"raw/note.md:line" when ``page`` was compiled from a raw note holding the same block
    (the n-th block with this text of the page is the n-th of the note), else "page:line"."""
    rel = raw_source(page)
    text = read_raw_note(raw_dir, rel) if raw_dir is not None and rel else None
    if text is not None:
        same = [b for b in data_blocks(page) if b.text == chosen.text]
        nth = next(i for i, b in enumerate(same) if b.line == chosen.line)
        # the note's blocks only: parsing it as a page (headings, sections, links) cost a
        # note of 85,000 headings 2.5 s of the query lane on every refused extract
        _, body, taken = split_frontmatter(text.removeprefix("\ufeff"))
        in_note = [b for b in _blocks(body, taken + 1) if b.text == chosen.text]
        if in_note:
            line = in_note[min(nth, len(in_note) - 1)].line + offset
            return f"{raw_label.rstrip('/')}/{rel}:{line}"
    return f"{page.path}:{chosen.line + offset}"
