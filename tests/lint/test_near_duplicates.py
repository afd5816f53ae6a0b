"""Near-duplicate pages found as before, faster: the whole Help vault's pairs through
`lint --rule near-duplicate --json`, and any set of pages against the former search (each
shingle joined and encoded apart, an index of Python lists, every candidate's union built),
kept here as the reference. The figures: bench/bench_near_duplicates.py."""

from __future__ import annotations

import json
import random
import re
import shutil
import zlib
from collections import defaultdict

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from mindgraph.cli import cli
from mindgraph.lint import duplicates
from mindgraph.page.parse import parse_page

# the Help vault's near-duplicate pairs, with their similarity, as main found them (2.6 s
# of `lint` before, 0.8 s now on its 883 pages)
HELP_PAIRS = [["Release notes/v1.11.6.md", "Release notes/v1.11.7.md", 0.7476635514018691],
              ["Release notes/v1.2.4.md", "Release notes/v1.2.5.md", 0.9054054054054054],
              ["Release notes/v1.4.15.md", "Release notes/v1.4.16.md", 1.0]]


def reference(pages):
    """The former near_duplicates, as it was (its findings are the ones to keep)."""
    word, cjk = re.compile(r"\w+"), re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")

    def shingles(text):
        tokens = [t for w in word.findall(text.lower())
                  for t in (cjk.findall(w) if cjk.search(w) else (w,))]
        return {zlib.crc32(" ".join(tokens[i:i + 5]).encode())
                for i in range(max(0, len(tokens) - 5 + 1))}

    found, index = {}, defaultdict(list)
    for page in sorted(pages, key=lambda p: p.path):
        found[page.path] = shingles(page.indexed_body)
        for shingle in found[page.path]:
            index[shingle].append(page.path)
    pairs = defaultdict(int)
    for paths in index.values():
        if 1 < len(paths) <= 8:
            for i, a in enumerate(paths):
                for b in paths[i + 1:]:
                    pairs[(a, b)] += 1
    out = []
    for (a, b), rare_shared in sorted(pairs.items()):
        sa, sb = found[a], found[b]
        if min(len(sa), len(sb)) < 36 or rare_shared < 3:
            continue
        similarity = len(sa & sb) / len(sa | sb)
        if similarity >= 0.7:
            out.append((a, b, similarity))
    return out


@pytest.mark.slow
def test_the_help_vaults_near_duplicates_are_the_ones_found_before(corpora, tmp_path):
    shutil.copytree(corpora / "obsidian-help", tmp_path / "wiki")
    (tmp_path / "mindgraph.yml").write_text("paths:\n  wiki: wiki\n  state: state\n")
    result = CliRunner().invoke(cli, ["lint", "-C", str(tmp_path), "--rule", "near-duplicate",
                                      "--json"])
    found = json.loads(result.stdout)["findings"]
    assert sorted([f["page"], f["other_page"]] for f in found) == [p[:2] for p in HELP_PAIRS]
    assert [f["message"].split()[0] for f in sorted(found, key=lambda f: f["page"])] == \
        [f"{similarity:.0%}" for _, _, similarity in HELP_PAIRS], found


WORDS = ("trunk boat kayak paddle harbour ferry water blade 東 京 タ ワ 长 城 故 宫 "
         "café naïve straße Ωmega 9 10 x_y").split()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 24))
def test_any_pages_give_the_pairs_the_former_search_gave(seed, count):
    """Pages drawn from a small vocabulary, some copied from others with a few words
    changed: the same pairs, in the same order, with the same similarity."""
    rng = random.Random(seed)
    texts = []
    for i in range(count):
        if any(texts) and rng.random() < 0.8:
            words = rng.choice([t for t in texts if t]).split()
            for _ in range(rng.randint(0, 40)):
                words[rng.randrange(len(words))] = rng.choice(WORDS)
            texts.append(" ".join(words))
        else:
            texts.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 120))))
    pages = [parse_page(f"# P{i}\n\n{text}\n", f"p{i:02}.md") for i, text in enumerate(texts)]
    got = [(a.path, b.path, s) for a, b, s in duplicates.near_duplicates(pages)]
    assert got == reference(pages)


def words(prefix, count):
    return " ".join(f"{prefix}{i}" for i in range(count))


def pages_of(texts):
    return [parse_page(f"{text}\n", f"p{i:02}.md") for i, text in enumerate(texts)]


@pytest.mark.parametrize("texts, pairs", [
    ([words("w", 60)] * 8, 28),             # a shingle on RARE pages is evidence
    ([words("w", 60)] * 9, 0),              # on more, boilerplate
    ([words("w", 40)] * 2, 1),              # 40 words: long enough
    ([words("w", 39)] * 2, 0),
    # two pages alike by boilerplate (on 10 pages) and exactly MIN_RARE_SHARED rare shingles
    ([f"{words('b', 60)} a{i} {words('r', 7) if i < 2 else words(f'o{i}x', 7)} z{i}"
      for i in range(10)], 1),
    ([f"{words('b', 60)} a{i} {words('r', 6) if i < 2 else words(f'o{i}x', 6)} z{i}"
      for i in range(10)], 0),
    ([words("w", 70), words("w", 51)], 1),  # 47 of 66 shingles: 0.712
    ([words("w", 70), words("w", 50)], 0),  # 46 of 66: 0.697
])
def test_the_edges_of_each_threshold_as_before(texts, pairs):
    pages = pages_of(texts)
    got = [(a.path, b.path, s) for a, b, s in duplicates.near_duplicates(pages)]
    assert got == reference(pages) and len(got) == pairs
