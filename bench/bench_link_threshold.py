"""Measure each offline model's cosine cut-off for `mindgraph enrich` links on the vault.

    python bench/bench_link_threshold.py                 # table, every model
    python bench/bench_link_threshold.py --json
    python bench/bench_link_threshold.py --models minilm,use

The Obsidian Help vault (en/, ja/, zh/: the same 173 pages in each language). For every page,
its enrich query text (title and the first 1,200 characters: enrich/links.py ``page_text``) is
embedded as a document and compared with every section (split at its headings) of every other
page of the same language, also embedded as documents; a pair's cosine is its best over both
directions and all sections, as enrich's search keeps a page's best chunk. A pair is *linked*
when either raw note links the other ([[wikilink]] by file name), *unlinked* otherwise.

For each model, over the languages it embeds under the routing it is used in (MiniLM: en;
use-multilingual-v3 and multilingual-e5-small: ja and zh), the cut-off is the lowest cosine
(0.01 steps) that at most 1% of unlinked pairs reach; the table gives the share of linked pairs
kept there and at the current default, and, per language, both shares at the cut-off (MiniLM
on ja/zh is what ``embedding: {languages: {}}`` gives).

coverage --semantic (coverage/semantic.py) asks the other way: an English text (a module's
docstrings) embedded as a *query* against a model's sections, which under routing are in that
model's languages, so for use-multilingual-v3 and e5 the question crosses languages. Measured
the same way (``--task coverage``): each English page's query text against the sections of
every page of the model's languages; a pair is right when both are the same page (one
``permalink`` in en/, ja/, zh/) or the English one links the other's page, and the cut-off is
the lowest cosine at most 1% of the other pairs reach. For MiniLM (English sections) that is
the link measurement's 0.71, which is coverage's 0.7 measured on this repository's notes.

Triage bands (triage/score.py) compare a trunk (embedded as a query, often English) with an
item (a document, in the model's languages), as coverage does: MiniLM's bands (0.25, 0.40,
0.55) are mapped to each other model by rank, the cosine at the same quantile of all the
coverage measurement's pairs as MiniLM's band among its own.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
import hashlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import shared_corpora  # noqa: E402

from mindgraph.page.links import WIKILINK_RE, parse_wikilink_inner  # noqa: E402

CORPORA = shared_corpora.corpora()
PAGE_CHARS = 1200
SECTION_CHARS = 1500
FALSE_RATE = 0.01
MINILM_BANDS = (0.25, 0.4, 0.55)
HEADING = re.compile(r"^#{1,6}\s", re.M)
FRONTMATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
# model → (module, class, languages it embeds under its routing, the current default)
MODELS = {
    "minilm": ("local", "LocalMiniLMProvider", ("en",), 0.7),
    "use": ("use", "LocalUSEProvider", ("ja", "zh"), 0.7),
    "e5": ("e5", "LocalE5Provider", ("ja", "zh"), 0.9),
}


PERMALINK = re.compile(r"^permalink:\s*(\S+)", re.M)
CACHE = Path(tempfile.gettempdir()) / "mg-bench-link-threshold"


def read_pages(folder: Path) -> dict[str, str]:
    """File stem → the note's text without frontmatter."""
    return {p.stem: FRONTMATTER.sub("", p.read_text(encoding="utf-8"))
            for p in sorted(folder.rglob("*.md"))}


def permalinks(folder: Path) -> dict[str, str]:
    """File stem → its permalink (the same page's in every language)."""
    out = {}
    for p in sorted(folder.rglob("*.md")):
        found = PERMALINK.search(p.read_text(encoding="utf-8"))
        if found:
            out[p.stem] = found.group(1)
    return out


def embed(provider, texts: list[str], kind: str) -> np.ndarray:
    """``texts`` embedded as documents or queries, cached on disk by model and texts (a re-run
    with the same notes embeds nothing)."""
    key = hashlib.sha256("\0".join([provider.model_version, kind, *texts]).encode()).hexdigest()
    path = CACHE / f"{key[:32]}.npy"
    if path.exists():
        return np.load(path)
    vectors = np.asarray(provider.embed_documents(texts) if kind == "doc"
                         else provider.embed_queries(texts), dtype=np.float32)
    CACHE.mkdir(exist_ok=True)
    np.save(path, vectors)
    return vectors


def linked_pairs(pages: dict[str, str]) -> set[frozenset[str]]:
    """Pairs of pages one of which links the other."""
    out = set()
    for name, text in pages.items():
        for match in WIKILINK_RE.finditer(text):
            target = parse_wikilink_inner(match.group(2))[0].strip().split("/")[-1]
            if target in pages and target != name:
                out.add(frozenset((name, target)))
    return out


def sections(name: str, text: str) -> list[str]:
    """The note cut at its headings, each with the page title first."""
    starts = [0] + [m.start() for m in HEADING.finditer(text)] + [len(text)]
    parts = [text[a:b].strip() for a, b in zip(starts, starts[1:])]
    return [f"{name}\n\n{p[:SECTION_CHARS]}" for p in parts if p] or [name]


def page_section_best(queries: np.ndarray, provider, pages: dict[str, str]) -> np.ndarray:
    """query × page: each query's best cosine over each page's sections."""
    names = sorted(pages)
    owner, texts = [], []
    for i, n in enumerate(names):
        for s in sections(n, pages[n]):
            owner.append(i)
            texts.append(s)
    sims = queries @ embed(provider, texts, "doc").T        # query × section
    owner_arr = np.asarray(owner)
    best = np.full((len(queries), len(names)), -1.0)
    for j in range(len(names)):
        best[:, j] = sims[:, owner_arr == j].max(axis=1)
    return best


def query_texts(pages: dict[str, str]) -> list[str]:
    """Each page's enrich query text, in name order."""
    return [f"{n}\n\n{pages[n][:PAGE_CHARS]}" for n in sorted(pages)]


def pair_scores(provider, pages: dict[str, str]) -> dict[frozenset[str], float]:
    """Every pair's best cosine (query text against the other's sections, both ways)."""
    names = sorted(pages)
    best = page_section_best(embed(provider, query_texts(pages), "doc"), provider, pages)
    return {frozenset((names[a], names[b])): float(max(best[a, b], best[b, a]))
            for a in range(len(names)) for b in range(a + 1, len(names))}


def cross_scores(provider, english: dict[str, str], en_links: set[frozenset[str]],
                 en_perma: dict[str, str], pages: dict[str, str], perma: dict[str, str]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(right, other) cosines of English query texts (embedded as queries) against
    ``pages``' sections: right when the same page or one the English page links."""
    en_names, names = sorted(english), sorted(pages)
    best = page_section_best(embed(provider, query_texts(english), "query"), provider, pages)
    by_perma = {v: k for k, v in en_perma.items()}
    right, other = [], []
    for a, en_name in enumerate(en_names):
        for b, name in enumerate(names):
            twin = by_perma.get(perma.get(name, ""), name if pages is english else None)
            if pages is english and name == en_name:
                continue                         # a page against itself
            good = twin == en_name or (twin is not None
                                       and frozenset((en_name, twin)) in en_links)
            (right if good else other).append(best[a, b])
    return np.asarray(right), np.asarray(other)


def cut_off(unlinked: np.ndarray) -> float:
    """The lowest 0.01 step that at most FALSE_RATE of ``unlinked`` reach."""
    for step in range(0, 101):
        t = step / 100
        if (unlinked >= t).mean() <= FALSE_RATE:
            return t
    return 1.0


def load(model: str):
    import importlib

    module, cls, _, _ = MODELS[model]
    provider = getattr(importlib.import_module(f"mindgraph.providers.embedding.{module}"), cls)
    return provider(state_dir=Path(tempfile.mkdtemp(prefix="mg-bench-threshold-")))


def link_row(provider, model: str, langs: list[str], corpus: dict, links: dict) -> dict:
    """The link measurement of one model."""
    routed = MODELS[model][2]
    measured = [lang for lang in langs if model != "e5" or lang in routed]   # e5 is slow
    counted = [lang for lang in measured if lang in routed] or measured
    per_lang = {}
    for lang in measured:
        scores = pair_scores(provider, corpus[lang])
        per_lang[lang] = (np.array([s for p, s in scores.items() if p in links[lang]]),
                          np.array([s for p, s in scores.items() if p not in links[lang]]))
    linked = np.concatenate([per_lang[lang][0] for lang in counted])
    unlinked = np.concatenate([per_lang[lang][1] for lang in counted])
    cut, default = cut_off(unlinked), MODELS[model][3]
    row = {"model": provider.model_version, "languages": counted,
           "linked_pairs": int(linked.size), "unlinked_pairs": int(unlinked.size),
           "cut_off": cut, "linked_kept": round(float((linked >= cut).mean()), 3),
           "unlinked_kept": round(float((unlinked >= cut).mean()), 4),
           "current_default": default,
           "linked_kept_at_default": round(float((linked >= default).mean()), 3),
           "unlinked_kept_at_default": round(float((unlinked >= default).mean()), 4),
           "per_language": {lang: {"cut_off": cut_off(u),
                                   "linked_kept": round(float((lk >= cut).mean()), 3),
                                   "unlinked_kept": round(float((u >= cut).mean()), 4)}
                            for lang, (lk, u) in per_lang.items()}}
    return row


def coverage_row(provider, model: str, langs: list[str], corpus: dict, links: dict,
                 perma: dict) -> dict:
    """The coverage measurement of one model: English queries against its languages."""
    routed = [lang for lang in MODELS[model][2] if lang in langs]
    right, other = [], []
    for lang in routed:
        r, o = cross_scores(provider, corpus["en"], links["en"], perma["en"], corpus[lang],
                            perma[lang])
        right.append(r)
        other.append(o)
    right_all, other_all = np.concatenate(right), np.concatenate(other)
    cut = cut_off(other_all)
    return {"model": provider.model_version, "sections": routed, "cut_off": cut,
            "all": np.concatenate([right_all, other_all]),
            "right_pairs": int(right_all.size), "other_pairs": int(other_all.size),
            "right_kept": round(float((right_all >= cut).mean()), 3),
            "other_kept": round(float((other_all >= cut).mean()), 4),
            "median_right": round(float(np.median(right_all)), 3),
            "median_other": round(float(np.median(other_all)), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--langs", default="en,ja,zh", help="languages measured")
    parser.add_argument("--task", choices=("links", "coverage", "both"), default="both")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    vault = shared_corpora.require(CORPORA, "obsidian-help") / "obsidian-help"
    langs = args.langs.split(",")
    corpus = {lang: read_pages(vault / lang) for lang in langs}
    links = {lang: linked_pairs(corpus[lang]) for lang in langs}
    perma = {lang: permalinks(vault / lang) for lang in langs}
    rows: dict[str, dict] = {"links": {}, "coverage": {}}
    for model in args.models.split(","):
        provider = load(model)
        start = time.perf_counter()
        if args.task in ("links", "both"):
            rows["links"][model] = link_row(provider, model, langs, corpus, links)
        if args.task in ("coverage", "both") and "en" in langs:
            rows["coverage"][model] = coverage_row(provider, model, langs, corpus, links,
                                                   perma)
        rows.setdefault("seconds", {})[model] = round(time.perf_counter() - start, 1)
    if "minilm" in rows["coverage"]:
        base = rows["coverage"]["minilm"]["all"]
        ranks = [float((base < b).mean()) for b in MINILM_BANDS]
        for model, row in rows["coverage"].items():
            row["triage_bands"] = [round(float(np.quantile(row["all"], r)), 2) for r in ranks]
    for row in rows["coverage"].values():
        del row["all"]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    print(f"enrich links: lowest cosine that <= {FALSE_RATE:.0%} of unlinked pairs reach")
    print(f"{'model':8} {'langs':6} {'linked':>6} {'unlinked':>8} {'cut':>5} {'kept':>6} "
          f"{'false':>6} | {'default':>7} {'kept':>6} {'false':>6}")
    for model, r in rows["links"].items():
        print(f"{model:8} {'+'.join(r['languages']):6} {r['linked_pairs']:6} "
              f"{r['unlinked_pairs']:8} {r['cut_off']:5.2f} {r['linked_kept']:6.1%} "
              f"{r['unlinked_kept']:6.2%} | {r['current_default']:7.2f} "
              f"{r['linked_kept_at_default']:6.1%} {r['unlinked_kept_at_default']:6.2%}")
        for lang, p in r["per_language"].items():
            print(f"    {lang}: own cut-off {p['cut_off']:.2f}; at {r['cut_off']:.2f} linked "
                  f"{p['linked_kept']:.1%}, unlinked {p['unlinked_kept']:.2%}")
    if rows["coverage"]:
        print(f"coverage --semantic: English queries against the model's sections, lowest "
              f"cosine that <= {FALSE_RATE:.0%} of other pairs reach")
        print(f"{'model':8} {'sections':8} {'right':>6} {'other':>6} {'cut':>5} {'kept':>6} "
              f"{'false':>6} {'median right/other':>19} | triage bands")
        for model, r in rows["coverage"].items():
            print(f"{model:8} {'+'.join(r['sections']):8} {r['right_pairs']:6} "
                  f"{r['other_pairs']:6} {r['cut_off']:5.2f} {r['right_kept']:6.1%} "
                  f"{r['other_kept']:6.2%} {r['median_right']:9.3f}/{r['median_other']:.3f} | "
                  f"{r.get('triage_bands', '')}")
    print(f"seconds: {rows['seconds']}")


if __name__ == "__main__":
    main()
