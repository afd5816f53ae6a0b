"""A synthetic vault of N notes written from real text, deterministic from a seed (issue 20).

    python bench/gen_corpus.py --notes 100000 --seed 1 OUT_DIR
    python bench/gen_corpus.py --notes 10000 --seed 1 --workspace OUT_DIR   # OUT_DIR/raw + config

Every sentence comes from the shared corpora (--corpora, bench/shared_corpora.py): the Obsidian Help vault in English, Japanese
and Chinese and the SciFact abstracts (English), split into sentences; nothing is invented but
the arrangement. The shape is that of a grown personal vault:

- folders two or three deep (about 40 notes a folder), names taken from the corpus's headings;
- frontmatter on most notes (tags, sometimes aliases, a created date), inline #tags on some,
  tags drawn with a long tail (a few tags on thousands of notes, most on a handful);
- headings (## and ###), lists, code blocks (copied from the corpus) on about one note in ten;
- wikilinks with a preferential-attachment shape (a few hubs, most notes linked once or twice),
  of every kind: ``[[Title]]``, ``[[Title|alias]]``, ``[[Title#Heading]]``, embeds; about 4 %
  point at no note (broken), and about 2 % of titles are used twice in different folders, so
  links to them are ambiguous;
- note lengths log-normal (median about 1.5 kB) and a few huge notes (0.4 to 1.5 MB).

The same ``--notes`` and ``--seed`` give the same bytes, file names and modification times.
With ``--workspace`` the notes go to OUT_DIR/raw and OUT_DIR/mindgraph.yml raises the scan
limits (limits.max_files) so that all N are read.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPORA = shared_corpora.corpora()
LANG_SHARE = (("en", 0.70), ("ja", 0.15), ("zh", 0.15))
NOTES_PER_FOLDER = 40
BROKEN_SHARE = 0.04
AMBIGUOUS_SHARE = 0.02
CODE_SHARE = 0.10
EPOCH = 1_700_000_000            # modification times: EPOCH + a fixed step per note
HUGE_BYTES = (400_000, 1_500_000)

_FENCE = re.compile(r"^(```|~~~)")
_LINK = re.compile(r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\\?\|([^\]]*))?\]\]")
_MDLINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"[*_`>]+|^\s*(?:[-+]|\d+\.)\s+|^#+\s*|==")
_EN_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_CJK_SPLIT = re.compile(r"(?<=[。！？])")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_BAD_NAME = re.compile(r'[\\/:*?"<>|#^\[\]\x00-\x1f]')


@dataclass
class Source:
    """What the notes are made of, per language: sentences, headings and code blocks."""

    sentences: dict[str, list[str]] = field(default_factory=dict)
    headings: dict[str, list[str]] = field(default_factory=dict)
    code_blocks: list[str] = field(default_factory=list)


def _clean(line: str) -> str:
    """A prose line without markdown: links become their text, emphasis and bullets go."""
    line = _LINK.sub(lambda m: m.group(2) or m.group(1), line)
    line = _MDLINK.sub(r"\1", line)
    line = _MARKUP.sub("", line)
    return " ".join(line.split())


def _split(text: str, lang: str) -> list[str]:
    """Sentences of a paragraph; for ja/zh only those written in CJK."""
    if lang == "en":
        parts = _EN_SPLIT.split(text)
        return [p for p in parts if 25 <= len(p) <= 400 and not _CJK.search(p)]
    parts = [p.strip() for p in _CJK_SPLIT.split(text)]
    return [p for p in parts if 8 <= len(p) <= 200 and _CJK.search(p)]


def _read_markdown(path: Path, lang: str, source: Source) -> None:
    """Sentences, headings and code blocks of one corpus note."""
    text = path.read_text(encoding="utf-8")
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        text = text[end + 4:] if end > 0 else text
    in_code, fence, code, paragraph = False, "```", [], []

    def flush() -> None:
        if paragraph:
            source.sentences[lang].extend(_split(" ".join(paragraph), lang))
            paragraph.clear()

    for line in text.splitlines():
        if _FENCE.match(line.strip()):
            if in_code:
                block = "\n".join(code)
                if 20 <= len(block) <= 1500:
                    source.code_blocks.append(f"{fence}\n{block}\n```")
                code = []
            else:
                flush()
                fence = "```" + line.strip()[3:].strip()
            in_code = not in_code
            continue
        if in_code:
            code.append(line)
            continue
        stripped = line.strip()
        if stripped.startswith("#"):
            flush()
            heading = _clean(stripped)
            if 3 <= len(heading) <= 60:
                source.headings[lang].append(heading)
        elif not stripped or stripped.startswith(("|", "![", "<", ">")):
            flush()
        else:
            paragraph.append(_clean(stripped))
    flush()


def load_source(corpora: Path = CORPORA) -> Source:
    """Every sentence of the shared corpora, in a fixed order (sorted paths, file order)."""
    source = Source({lang: [] for lang, _ in LANG_SHARE}, {lang: [] for lang, _ in LANG_SHARE})
    vault = corpora / "obsidian-help"
    for lang in ("en", "ja", "zh"):
        for path in sorted((vault / lang).rglob("*.md")):
            _read_markdown(path, lang, source)
    for path in sorted((vault / "Release notes").rglob("*.md")):
        _read_markdown(path, "en", source)
    scifact = corpora / "scifact" / "corpus.jsonl"
    if scifact.is_file():
        with scifact.open(encoding="utf-8") as lines:
            for line in lines:
                doc = json.loads(line)
                source.sentences["en"].extend(_split(doc["text"], "en"))
                title = doc["title"].rstrip(".")
                if len(title) <= 60:
                    source.headings["en"].append(title)
    for lang in source.sentences:
        source.sentences[lang] = list(dict.fromkeys(source.sentences[lang]))
        source.headings[lang] = list(dict.fromkeys(source.headings[lang]))
        if not source.sentences[lang] or not source.headings[lang]:
            sys.exit(f"no {lang} text found under {corpora}: is the corpus there?")
    return source


def _name(text: str) -> str:
    """A file or folder name from a heading: no characters a file system or a link refuses."""
    name = " ".join(_BAD_NAME.sub(" ", text).split()).strip(". ")
    return name[:60] or "Untitled"


@dataclass
class Note:
    """One note to write: where, what it is called, its language and what it links to."""

    path: str
    title: str
    lang: str
    headings: list[str] = field(default_factory=list)


def _pick_lang(rng: random.Random) -> str:
    roll, total = rng.random(), 0.0
    for lang, share in LANG_SHARE:
        total += share
        if roll < total:
            return lang
    return LANG_SHARE[-1][0]


def _folders(rng: random.Random, source: Source, notes: int) -> list[str]:
    """Folder paths, two or three deep, about NOTES_PER_FOLDER notes each."""
    count = max(1, notes // NOTES_PER_FOLDER)
    tops = [_name(h) for h in rng.sample(source.headings["en"], 8)]
    folders: list[str] = []
    seen: set[str] = set()
    while len(folders) < count:
        lang = _pick_lang(rng)
        parts = [rng.choice(tops), _name(rng.choice(source.headings[lang]))]
        if rng.random() < 0.4:
            parts.append(_name(rng.choice(source.headings[lang])))
        folder = "/".join(parts)
        if folder.lower() not in seen:
            seen.add(folder.lower())
            folders.append(folder)
    return folders


def _tags(rng: random.Random, source: Source) -> list[str]:
    """A tag vocabulary: words of the English headings, some nested (area/topic)."""
    words = sorted({w.lower() for h in source.headings["en"]
                    for w in re.findall(r"[A-Za-z]{4,}", h)})
    vocab = rng.sample(words, min(400, len(words)))
    nested = [f"{rng.choice(vocab[:20])}/{w}" for w in vocab[350:]]
    return vocab[:350] + nested


def _plan(rng: random.Random, source: Source, notes: int) -> list[Note]:
    """Every note's folder, title and language; some titles used twice (ambiguous links)."""
    folders = _folders(rng, source, notes)
    plan: list[Note] = []
    used: set[str] = set()
    titles: list[str] = []
    for index in range(notes):
        lang = _pick_lang(rng)
        folder = folders[min(len(folders) - 1, int(rng.paretovariate(1.2)) - 1)
                         if rng.random() < 0.3 else rng.randrange(len(folders))]
        if titles and rng.random() < AMBIGUOUS_SHARE:
            title = rng.choice(titles)              # the same title in another folder
        else:
            base = _name(rng.choice(source.headings[lang]))
            title = base if base.lower() not in used else f"{base} {index}"
            titles.append(title)
        path = f"{folder}/{title}.md"
        for _ in range(8):                          # another folder for a title used twice
            if path.lower() not in used:
                break
            path = f"{rng.choice(folders)}/{title}.md"
        else:
            title = f"{title} {index}"
            titles.append(title)
            path = f"{folder}/{title}.md"
        used.add(path.lower())
        used.add(title.lower())
        plan.append(Note(path, title, lang))
    return plan


def _sentences(rng: random.Random, pool: list[str], count: int) -> list[str]:
    start = rng.randrange(len(pool))
    if rng.random() < 0.5:      # a run of neighbouring sentences reads like one text
        return [pool[(start + i) % len(pool)] for i in range(count)]
    return [rng.choice(pool) for _ in range(count)]


def _link(rng: random.Random, plan: list[Note], weights: list[float], source: Source,
          lang: str) -> str:
    """One wikilink: mostly to a hub-weighted note, sometimes to no note at all."""
    if rng.random() < BROKEN_SHARE:
        return f"[[{_name(rng.choice(source.headings[lang]))} (draft)]]"
    target = rng.choices(plan, cum_weights=weights)[0]
    roll = rng.random()
    if roll < 0.12 and target.headings:
        return f"[[{target.title}#{rng.choice(target.headings)}]]"
    if roll < 0.22:
        return f"[[{target.title}|{_name(rng.choice(source.headings[target.lang]))}]]"
    if roll < 0.25:
        return f"![[{target.title}]]"
    return f"[[{target.title}]]"


def _paragraph(rng: random.Random, sentences: list[str], links: list[str], lang: str) -> str:
    glue = " " if lang == "en" else ""
    words = list(sentences)
    for link in links:
        at = rng.randrange(len(words))
        before = rng.random() < 0.5
        words[at] = f"{link}{glue}{words[at]}" if before else f"{words[at]}{glue}{link}"
    return glue.join(words)


def _frontmatter(rng: random.Random, note: Note, tags: list[str], tag_weights: list[float],
                 index: int, source: Source) -> tuple[str, list[str]]:
    chosen = sorted(set(rng.choices(tags, cum_weights=tag_weights, k=rng.randint(0, 4))))
    if rng.random() < 0.15:
        return "", chosen                          # no frontmatter: tags inline, if any
    lines = ["---"]
    if chosen:
        lines.append("tags:")
        lines.extend(f"  - {t}" for t in chosen)
    if rng.random() < 0.1:
        lines.append("aliases:")
        alias = _name(rng.choice(source.headings[note.lang]))
        lines.append(f"  - {json.dumps(alias, ensure_ascii=False)}")
    day = 19000 + index * 3 // 10 % 2000
    lines.append(f"created: {_iso_day(day)}")
    if rng.random() < 0.2:
        lines.append(f"status: {rng.choice(['draft', 'review', 'done'])}")
    lines.append("---")
    return "\n".join(lines) + "\n", []


def _iso_day(days: int) -> str:
    return (datetime.date(1970, 1, 1) + datetime.timedelta(days=days)).isoformat()


def _body(rng: random.Random, note: Note, plan: list[Note], weights: list[float],
          source: Source, target_bytes: int) -> str:
    pool = source.sentences[note.lang]
    parts = [f"# {note.title}\n"]
    size = 0
    first = True
    while size < target_bytes:
        if not first or rng.random() < 0.3:
            heading = _name(rng.choice(source.headings[note.lang]))
            note.headings.append(heading)
            parts.append(f"{'##' if rng.random() < 0.75 else '###'} {heading}\n")
        first = False
        for _ in range(rng.randint(1, 3)):
            links = [_link(rng, plan, weights, source, note.lang)
                     for _ in range(rng.choice((0, 0, 1, 1, 1, 2, 3)))]
            text = _paragraph(rng, _sentences(rng, pool, rng.randint(1, 5)), links, note.lang)
            if rng.random() < 0.15:
                items = _sentences(rng, pool, rng.randint(2, 5))
                text = "\n".join(f"- {item}" for item in items)
            parts.append(text + "\n")
            size += len(text.encode("utf-8"))
            if size >= target_bytes:
                break
    return "\n".join(parts)


def generate(out_dir: Path, notes: int, seed: int, source: Source | None = None) -> dict:
    """Write ``notes`` notes under ``out_dir``; return a summary of the shape written."""
    source = source or load_source()
    rng = random.Random(seed)
    plan = _plan(rng, source, notes)
    # hubs: note i is linked with weight 1/(rank+1)^0.8 over a shuffled order (Zipf-like)
    ranks = list(range(notes))
    rng.shuffle(ranks)
    weights, total = [], 0.0
    for rank in ranks:
        total += 1.0 / (rank + 1) ** 0.8
        weights.append(total)
    tags = _tags(rng, source)
    tag_weights, total = [], 0.0
    for rank in range(len(tags)):
        total += 1.0 / (rank + 1) ** 1.1
        tag_weights.append(total)
    huge = set(rng.sample(range(notes), min(notes, 2 + notes // 5000)))
    code_notes = 0
    out_dir.mkdir(parents=True, exist_ok=True)
    for index, note in enumerate(plan):
        if index in huge:
            target = rng.randint(*HUGE_BYTES)
        else:
            target = int(min(60_000, max(80, rng.lognormvariate(math.log(1500), 0.9))))
        front, inline_tags = _frontmatter(rng, note, tags, tag_weights, index, source)
        body = _body(rng, note, plan, weights, source, target)
        if rng.random() < CODE_SHARE:
            blocks = [rng.choice(source.code_blocks) for _ in range(rng.randint(1, 3))]
            body += "\n" + "\n\n".join(blocks) + "\n"
            code_notes += 1
        if inline_tags:
            body += "\n" + " ".join(f"#{t}" for t in inline_tags) + "\n"
        path = out_dir / note.path
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="\n") as handle:
            handle.write(front + body)
        stamp = EPOCH + index * 60
        os.utime(path, (stamp, stamp))
    return {"notes": notes, "seed": seed, "folders": len({n.path.rsplit("/", 1)[0] for n in plan}),
            "huge": len(huge), "code_notes": code_notes}


def write_workspace_config(base: Path, notes: int) -> None:
    """A mindgraph.yml whose scan limits let every generated note in."""
    (base / "mindgraph.yml").write_text(
        "# written by bench/gen_corpus.py\n"
        "limits:\n"
        f"  max_files: {max(5000, notes + 1000)}\n"
        "  max_total_bytes: 20000000000\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    """The command line (see the module's docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("out_dir", type=Path, help="folder to write the notes into")
    parser.add_argument("--notes", type=int, default=10_000, help="how many notes (10000)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (1)")
    parser.add_argument("--workspace", action="store_true",
                        help="write OUT_DIR/raw and OUT_DIR/mindgraph.yml (a ready workspace)")
    args = parser.parse_args(argv)
    if args.notes < 1:
        parser.error("--notes must be at least 1")
    target = args.out_dir / "raw" if args.workspace else args.out_dir
    if target.exists() and any(target.iterdir()):
        parser.error(f"{target} is not empty: choose an empty or new folder")
    summary = generate(target, args.notes, args.seed)
    if args.workspace:
        write_workspace_config(args.out_dir, args.notes)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
