"""bench/gen_corpus.py: the same seed writes the same bytes, and the vault has the stated shape."""

import hashlib
import importlib.util
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "gen_corpus.py"
CORPORA = ROOT.parent / "shared" / "corpora"
if not CORPORA.is_dir():
    CORPORA = Path("/work/shared/corpora")
pytestmark = pytest.mark.skipif(not (CORPORA / "obsidian-help").is_dir(),
                                reason="the shared corpora are not here")
LINK = re.compile(r"(!?)\[\[([^\]|#]+)(#[^\]|]+)?(\|[^\]]+)?\]\]")
NOTES = 600


def _module():
    spec = importlib.util.spec_from_file_location("gen_corpus", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_corpus"] = module          # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gen():
    return _module()


@pytest.fixture(scope="module")
def source(gen):
    return gen.load_source(CORPORA)


def _digest(folder: Path) -> str:
    """Names, bytes and modification times of every file under ``folder``."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(folder)).encode())
            digest.update(path.read_bytes())
            digest.update(str(int(path.stat().st_mtime)).encode())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def vault(tmp_path_factory, gen, source):
    out = tmp_path_factory.mktemp("vault")
    gen.generate(out, NOTES, 7, source)
    return out


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path, gen, source, vault):
    again = tmp_path / "again"
    gen.generate(again, NOTES, 7, source)
    other = tmp_path / "other"
    gen.generate(other, NOTES, 8, source)
    assert _digest(again) == _digest(vault)
    assert _digest(other) != _digest(vault)


def test_the_cli_writes_a_workspace_and_refuses_a_full_folder(tmp_path, gen, source):
    out = tmp_path / "ws"
    run = subprocess.run([sys.executable, str(SCRIPT), "--notes", "40", "--seed", "7",
                          "--workspace", str(out)], capture_output=True, text=True,
                         env={"MINDGRAPH_CORPORA": str(CORPORA), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert len(list((out / "raw").rglob("*.md"))) == 40
    assert "max_files:" in (out / "mindgraph.yml").read_text()
    again = subprocess.run([sys.executable, str(SCRIPT), "--notes", "40", "--workspace",
                            str(out)], capture_output=True, text=True,
                           env={"MINDGRAPH_CORPORA": str(CORPORA), "PATH": "/usr/bin:/bin"})
    assert again.returncode == 2 and "is not empty" in again.stderr
    # the CLI writes what generate() writes for the same seed
    direct = tmp_path / "direct"
    gen.generate(direct, 40, 7, source)
    assert _digest(direct) == _digest(out / "raw")


def test_the_shape_is_as_stated(vault, source):
    notes = sorted(vault.rglob("*.md"))
    assert len(notes) == NOTES
    texts = {p: p.read_text(encoding="utf-8") for p in notes}
    folders = {p.parent for p in notes}
    depths = Counter(len(p.relative_to(vault).parts) - 1 for p in notes)
    assert len(folders) >= NOTES // 60 and set(depths) <= {2, 3} and depths[3] > 0
    with_front = [t for t in texts.values() if t.startswith("---\n")]
    assert 0.7 * NOTES < len(with_front) < 0.95 * NOTES
    assert sum("tags:\n" in t for t in with_front) > NOTES // 3
    assert any("aliases:\n" in t for t in with_front)
    assert any(re.search(r"^#[a-z]+", t, re.M) for t in texts.values())      # inline tags
    assert sum(bool(re.search(r"^## ", t, re.M)) for t in texts.values()) > NOTES // 2
    code = sum("```" in t for t in texts.values())
    assert 0.05 * NOTES < code < 0.2 * NOTES
    sizes = sorted(p.stat().st_size for p in notes)
    assert 500 < sizes[len(sizes) // 2] < 4000                               # median note
    assert sizes[-1] >= 400_000 and sizes[-2] >= 400_000 and sizes[-3] < 400_000   # huge ones

    # links: kinds, broken ones and ambiguous ones
    titles = Counter(p.stem for p in notes)
    links = [m for t in texts.values() for m in LINK.finditer(t)]
    assert len(links) > NOTES
    targets = [m.group(2) for m in links]
    broken = sum(titles[t] == 0 for t in targets)
    assert 0.01 < broken / len(links) < 0.1
    ambiguous = {t for t, n in titles.items() if n > 1}
    assert ambiguous and any(t in ambiguous for t in targets)
    assert any(m.group(1) for m in links) and any(m.group(3) for m in links)
    assert any(m.group(4) for m in links)
    inbound = Counter(targets)
    assert inbound.most_common(1)[0][1] > 10 * (len(links) / NOTES)          # hubs

    # real text in three languages, no invented words
    langs = Counter("ja" if re.search(r"[\u3040-\u30ff]", t) else
                    "zh" if re.search(r"[\u4e00-\u9fff]", t) else "en" for t in texts.values())
    assert all(langs[lang] > NOTES // 20 for lang in ("en", "ja", "zh"))
    corpus_sentences = {s for pool in source.sentences.values() for s in pool}
    sample = next(t for p, t in texts.items() if p.stat().st_size < 4000 and "```" not in t)
    line = next(ln for ln in sample.splitlines()[1:] if ln and not ln.startswith(("#", "-")))
    first = LINK.sub("", line).strip().split(". ")[0]
    assert any(first in s for s in corpus_sentences)
