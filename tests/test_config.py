"""mindgraph.yml → typed settings: defaults, strict validation, env overrides, secrets."""

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.config import DEFAULT_CONFIG_YAML, load_settings, settings_from_dict
from mindgraph.errors import ConfigError


def write(tmp_path, text):
    (tmp_path / "mindgraph.yml").write_text(text, encoding="utf-8")
    return tmp_path


def test_no_file_gives_offline_defaults(tmp_path):
    settings = load_settings(tmp_path, environ={})
    assert settings.compile.provider == "offline"
    assert settings.embedding.provider == "local"
    assert settings.store.backend == "embedded"
    assert settings.raw_dir == (tmp_path / "raw").resolve()
    assert settings.source == "(defaults)"


def test_scaffolded_file_parses_to_defaults(tmp_path):
    settings = load_settings(write(tmp_path, DEFAULT_CONFIG_YAML), environ={})
    assert settings == load_settings(tmp_path / "empty-dir-does-not-matter", environ={})


def test_unknown_key_names_the_key_and_the_known_ones(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown key 'compile\.modle'.*model"):
        load_settings(write(tmp_path, "compile:\n  modle: x\n"), environ={})


def test_unknown_section(tmp_path):
    with pytest.raises(ConfigError, match="unknown section 'retrievl'"):
        load_settings(write(tmp_path, "retrievl: {}\n"), environ={})


def test_wrong_type_names_key_and_fix(tmp_path):
    with pytest.raises(ConfigError, match=r"'compile\.concurrency' must be an int, got 'many'"):
        load_settings(write(tmp_path, "compile:\n  concurrency: many\n"), environ={})


def test_bad_choice_lists_choices(tmp_path):
    with pytest.raises(ConfigError, match="offline, anthropic, gemini, openai"):
        load_settings(write(tmp_path, "compile:\n  provider: gpt\n"), environ={})


def test_a_misspelt_choice_suggests_the_closest_one(tmp_path):
    """'store.backend' is 'embeded' listed the choices but, unlike a misspelt key, named
    none of them as the one meant."""
    write(tmp_path, "store:\n  backend: embeded\n")
    result = CliRunner().invoke(cli, ["stats", "-C", str(tmp_path)])
    assert result.exit_code == 2
    assert "mindgraph.yml:2: 'store.backend' is 'embeded'; it must be one of embedded, " \
        "pgvector. Did you mean 'embedded'?" in result.output, result.output
    write(tmp_path, "compile:\n  provider: gpt\n")       # nothing close: no guess
    result = CliRunner().invoke(cli, ["stats", "-C", str(tmp_path)])
    assert result.output.rstrip().endswith("offline, anthropic, gemini, openai."), result.output


def test_yaml_syntax_error_has_line(tmp_path):
    with pytest.raises(ConfigError, match=r"mindgraph\.yml:2"):
        load_settings(write(tmp_path, "compile:\n  provider: a: b\n"), environ={})


def test_a_section_given_twice_names_both_lines(tmp_path):
    text = "retrieval:\n  expansion: never\ncompile:\n  provider: offline\nretrieval:\n  top_k: 5\n"
    with pytest.raises(ConfigError, match=r"mindgraph\.yml:5: 'retrieval' is given twice "
                                          r"\(first at line 1\)"):
        load_settings(write(tmp_path, text), environ={})


def test_a_key_given_twice_in_a_section_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"mindgraph\.yml:3: 'provider' is given twice"):
        load_settings(write(tmp_path, "compile:\n  provider: offline\n  provider: anthropic\n"),
                      environ={})


def test_a_key_given_twice_on_one_line_is_refused_as_written(tmp_path):
    with pytest.raises(ConfigError, match=r"mindgraph\.yml:1: 'raw' is given twice"):
        load_settings(write(tmp_path, "paths: {raw: raw, raw: elsewhere}\n"), environ={})
    with pytest.raises(ConfigError, match=r"mindgraph\.yml:2: 'yes' is given twice"):
        load_settings(write(tmp_path, "true: 1\nyes: 2\n"), environ={})


def test_a_key_that_is_not_a_string_is_an_unknown_section(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown section '1'"):
        load_settings(write(tmp_path, "1: x\n"), environ={})


@pytest.mark.parametrize("text", ["retrieval:\n  vector_weight: .inf\n",
                                  "retrieval:\n  keyword_weight: .nan\n",
                                  "retrieval:\n  twin_weights: {ja: .inf}\n"])
def test_a_weight_that_is_not_finite_is_refused(tmp_path, text):
    with pytest.raises(ConfigError, match=r"finite|weights of 0 or more"):
        load_settings(write(tmp_path, text), environ={})


@pytest.mark.parametrize("key", ["llm_calls_per_hour", "embedding_calls_per_hour",
                                 "documents_per_day"])
def test_a_negative_quota_is_refused_and_0_turns_it_off(tmp_path, key):
    with pytest.raises(ConfigError, match=rf"limits.{key}.*0 \(no limit\) or more"):
        load_settings(write(tmp_path, f"limits:\n  {key}: -1\n"), environ={})
    assert getattr(load_settings(write(tmp_path, f"limits:\n  {key}: 0\n"), environ={}).limits,
                   key) == 0


def test_a_mapping_setting_can_come_from_the_environment(tmp_path):
    settings = load_settings(tmp_path, environ={"MINDGRAPH_RETRIEVAL__TWIN_WEIGHTS": "{ja: 0}"})
    assert settings.retrieval.twin_weights == {"ja": 0}
    with pytest.raises(ConfigError, match=r"MINDGRAPH_RETRIEVAL__VECTOR_WEIGHT.*finite"):
        load_settings(tmp_path, environ={"MINDGRAPH_RETRIEVAL__VECTOR_WEIGHT": "inf"})


def test_merge_keys_may_be_overridden(tmp_path):
    text = ("x-base: &base\n  provider: offline\n  concurrency: 2\n"
            "compile:\n  <<: *base\n  concurrency: 3\n")
    from mindgraph.yamlfile import load_strict
    assert load_strict(text)["compile"] == {"provider": "offline", "concurrency": 3}


def test_missing_required_adapter_name(tmp_path):
    with pytest.raises(ConfigError, match=r"'adapters\[0\]\.name' is required"):
        load_settings(write(tmp_path, "adapters:\n  - type: filesystem\n"), environ={})


def test_env_overrides_file_and_is_typed(tmp_path):
    write(tmp_path, "compile:\n  concurrency: 2\n")
    settings = load_settings(tmp_path, environ={"MINDGRAPH_COMPILE__CONCURRENCY": "8",
                                                "MINDGRAPH_STORE__BACKEND": "pgvector"})
    assert settings.compile.concurrency == 8
    assert settings.store.backend == "pgvector"
    with pytest.raises(ConfigError, match="unknown key 'compile.bogus'"):
        load_settings(tmp_path, environ={"MINDGRAPH_COMPILE__BOGUS": "1"})


def test_llm_provider_key_variable_defaults_to_the_providers_own(monkeypatch):
    from mindgraph.providers.llm.factory import make_llm_provider

    settings = settings_from_dict({"compile": {"provider": "anthropic"}})  # valid: no key yet
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY is not set"):
        make_llm_provider(settings)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    assert make_llm_provider(settings) is not None


def test_secrets_are_read_from_the_named_variable(tmp_path, monkeypatch):
    settings = settings_from_dict({"compile": {"provider": "anthropic",
                                               "api_key_env": "MG_TEST_KEY"}})
    monkeypatch.delenv("MG_TEST_KEY", raising=False)
    with pytest.raises(ConfigError, match="MG_TEST_KEY is not set"):
        settings.secret(settings.compile.api_key_env, "compile")
    monkeypatch.setenv("MG_TEST_KEY", "sk-123")
    assert settings.secret(settings.compile.api_key_env, "compile") == "sk-123"


def test_explicit_missing_config_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path, tmp_path / "nope.yml", environ={})


def test_raw_and_wiki_must_differ():
    with pytest.raises(ConfigError, match="different folders"):
        settings_from_dict({"paths": {"raw": "notes", "wiki": "notes/"}})


def test_errors_name_the_environment_variable_that_set_the_value(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from mindgraph.cli import cli

    assert CliRunner().invoke(cli, ["init", str(tmp_path / "kb")]).exit_code == 0
    (tmp_path / "kb" / "raw" / "a.md").write_text("# A\nSome text.\n")
    monkeypatch.setenv("MINDGRAPH_COMPILE__PROVIDER", "openai")
    result = CliRunner().invoke(cli, ["ingest", "-C", str(tmp_path / "kb")])
    assert result.exit_code == 2
    assert "Error: Environment variable MINDGRAPH_COMPILE__PROVIDER: compile.provider is " \
        "openai but compile.api_key_env is empty" in result.output
    assert "mindgraph.yml" not in result.output


def test_a_bad_value_from_the_environment_names_the_variable_only(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from mindgraph.cli import cli

    assert CliRunner().invoke(cli, ["init", str(tmp_path / "kb")]).exit_code == 0
    monkeypatch.setenv("MINDGRAPH_COMPILE__CONCURRENCY", "abc")
    result = CliRunner().invoke(cli, ["stats", "-C", str(tmp_path / "kb")])
    assert result.exit_code == 2
    assert "Environment variable MINDGRAPH_COMPILE__CONCURRENCY: 'compile.concurrency' must " \
        "be an int, got 'abc'. Fix the value of MINDGRAPH_COMPILE__CONCURRENCY." in result.output
    assert "mindgraph.yml" not in result.output and "override" not in result.output


def test_an_out_of_range_value_from_the_environment_names_the_variable_not_the_file(
        tmp_path, monkeypatch):
    """A range check ('must be at least 1') on a value set by MINDGRAPH_… told the user to fix
    mindgraph.yml, which does not hold it."""
    assert CliRunner().invoke(cli, ["init", str(tmp_path / "kb")]).exit_code == 0
    monkeypatch.setenv("MINDGRAPH_COMPILE__CONCURRENCY", "-3")
    result = CliRunner().invoke(cli, ["ingest", "--dry-run", "-C", str(tmp_path / "kb")])
    assert result.exit_code == 2
    assert "Environment variable MINDGRAPH_COMPILE__CONCURRENCY: 'compile.concurrency' must " \
        "be at least 1. Fix the value of MINDGRAPH_COMPILE__CONCURRENCY." in result.output
    assert "mindgraph.yml" not in result.output
    monkeypatch.delenv("MINDGRAPH_COMPILE__CONCURRENCY")
    (tmp_path / "kb" / "mindgraph.yml").write_text("compile:\n  concurrency: -3\n")
    result = CliRunner().invoke(cli, ["ingest", "--dry-run", "-C", str(tmp_path / "kb")])
    assert result.exit_code == 2
    assert "mindgraph.yml:2: 'compile.concurrency' must be at least 1. Fix the value in " \
        in result.output


def test_secret_errors_name_the_exact_env_key(tmp_path, monkeypatch):
    settings = settings_from_dict({"store": {"backend": "pgvector", "dsn_env": "NO_SUCH_DSN"}},
                                  source="kb/mindgraph.yml")
    monkeypatch.delenv("NO_SUCH_DSN", raising=False)
    with pytest.raises(ConfigError, match=r"or change store\.dsn_env in kb/mindgraph\.yml\."):
        settings.secret(settings.store.dsn_env, "store.backend pgvector")
    monkeypatch.setenv("MINDGRAPH_STORE__DSN_ENV", "NO_SUCH_DSN")
    from_env = load_settings(tmp_path)
    with pytest.raises(ConfigError, match=r"change store\.dsn_env \(set by environment variable "
                                          r"MINDGRAPH_STORE__DSN_ENV\)"):
        from_env.secret(from_env.store.dsn_env, "store.backend pgvector")
    with pytest.raises(ConfigError, match=r"Set compile\.api_key_env in"):
        settings.secret("", "compile.provider=anthropic")


def test_an_unknown_key_suggests_the_closest_known_one(tmp_path, monkeypatch):
    (tmp_path / "mindgraph.yml").write_text("compile:\n  provder: openai\n")
    with pytest.raises(ConfigError, match=r"unknown key 'compile\.provder'\. Did you mean "
                                          r"'provider'\?"):
        load_settings(tmp_path)
    (tmp_path / "mindgraph.yml").write_text("retreival: {}\n")
    with pytest.raises(ConfigError, match=r"Did you mean 'retrieval'\?"):
        load_settings(tmp_path)
    (tmp_path / "mindgraph.yml").write_text("")
    monkeypatch.setenv("MINDGRAPH_COMPILE__PROVDER", "x")
    with pytest.raises(ConfigError, match=r"MINDGRAPH_COMPILE__PROVDER: .*Did you mean "
                                          r"'provider'\?"):
        load_settings(tmp_path)


def test_trust_fetching_is_off_by_default_and_its_bounds_and_primary_globs_are_checked(tmp_path):
    settings = load_settings(tmp_path, environ={})
    assert settings.trust.fetch_urls is False and settings.trust.fetch_max_redirects == 5
    on = load_settings(tmp_path, environ={"MINDGRAPH_TRUST__FETCH_URLS": "true"})
    assert on.trust.fetch_urls is True
    with pytest.raises(ConfigError, match=r"'trust\.fetch_timeout_s' must be above 0"):
        load_settings(write(tmp_path, "trust:\n  fetch_timeout_s: 0\n"), environ={})
    with pytest.raises(ConfigError, match=r"'policies/\*' matches no evidence: start it with "
                                          r"raw:"):
        load_settings(write(tmp_path, "trust:\n  primary_sources: ['policies/*']\n"),
                      environ={})
    ok = load_settings(write(tmp_path, "trust:\n  primary_sources: ['raw:policies/*', "
                                       "'https://docs.example.com/*']\n"), environ={})
    assert ok.trust.primary_sources == ("raw:policies/*", "https://docs.example.com/*")


def test_ef_search_is_held_to_pgvectors_range(tmp_path):
    """pgvector takes hnsw.ef_search 1..1000. 5000 was accepted, and pgvector, loaded after the
    SET, dropped it with a server-side warning: every query ran at its default 40."""
    assert load_settings(write(tmp_path, "store:\n  ef_search: 1000\n"),
                         environ={}).store.ef_search == 1000
    result = CliRunner().invoke(cli, ["stats", "-C", str(write(tmp_path,
                                                               "store:\n  ef_search: 5000\n"))])
    assert result.exit_code == 2
    assert "'store.ef_search' must be between 1 and 1000 (pgvector's range)" in result.output


# -- embedding.model and embedding.languages: checked when the file is loaded -------------------

BAD_EMBEDDING = [
    ("embedding:\n  provider: local\n  model: all-MiniLM-L7\n", 3,
     "'embedding.model' is 'all-MiniLM-L7'", "Did you mean 'all-MiniLM-L6-v2'?"),
    ("paths:\n  raw: raw\nembedding:\n  languages:\n    en: all-MiniLM-L6-v2\n"
     "    ja: multilingual-e5-smol\n", 6,
     "'embedding.languages' maps ja to 'multilingual-e5-smol'",
     "Did you mean 'multilingual-e5-small'?"),
    ("embedding:\n  languages:\n    jp: multilingual-e5-small\n", 3,
     "'embedding.languages' has 'jp'", "It must be one of en, ja, zh, ko, other"),
]


def bad_workspace(tmp_path, text):
    (tmp_path / "raw").mkdir(exist_ok=True)
    (tmp_path / "raw" / "note.md").write_text("# Note\n\nTrunks.\n")
    (tmp_path / "mindgraph.yml").write_text(text)
    return tmp_path


@pytest.mark.parametrize("text, line, what, hint", BAD_EMBEDDING)
@pytest.mark.parametrize("command", [["ingest"], ["search", "--hybrid", "trunks"], ["check"]])
def test_a_bad_embedding_model_is_reported_by_every_command(tmp_path, text, line, what, hint,
                                                            command):
    workspace = bad_workspace(tmp_path, text)
    result = CliRunner().invoke(cli, [*command, "-C", str(workspace)])
    assert result.exit_code == 2, result.output
    assert f"Error: {workspace / 'mindgraph.yml'}:{line}: {what}" in result.output
    assert hint in result.output and "Traceback" not in result.output
    if "model" in what or "maps" in what:         # the valid choices, all of them
        assert "all-MiniLM-L6-v2, all-MiniLM-L6-v2-w8a8" in result.output
        assert "use-multilingual-v3" in result.output
    assert not (workspace / "wiki").exists()      # refused before any work


def test_serve_refuses_a_bad_embedding_model_before_it_starts(tmp_path):
    import socket
    import subprocess
    import sys

    workspace = bad_workspace(tmp_path, BAD_EMBEDDING[0][0])
    (workspace / "wiki").mkdir()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    try:
        done = subprocess.run([sys.executable, "-m", "mindgraph", "serve", "-C", str(workspace),
                               "--port", str(port)], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("serve started with a bad embedding.model instead of refusing it")
    assert done.returncode == 2
    assert f"{workspace / 'mindgraph.yml'}:3: 'embedding.model' is 'all-MiniLM-L7'" in done.stderr
    assert "Traceback" not in done.stderr


def test_embedding_languages_need_the_local_provider_and_dimension_fits_the_model(tmp_path):
    with pytest.raises(ConfigError, match=r"mindgraph\.yml:3: 'embedding\.languages' routes "
                                          r"languages to local models; it needs "
                                          r"embedding\.provider local \(it is hashing\)"):
        load_settings(write(tmp_path, "embedding:\n  provider: hashing\n  languages:\n"
                                      "    ja: multilingual-e5-small\n"), environ={})
    with pytest.raises(ConfigError, match=r"mindgraph\.yml:2: 'embedding\.dimension' is 512, "
                                          r"but all-MiniLM-L6-v2 makes vectors of 384"):
        load_settings(write(tmp_path, "embedding:\n  dimension: 512\n"), environ={})
    assert load_settings(write(tmp_path, "embedding:\n  model: use-multilingual-v3\n"
                                         "  dimension: 512\n"), environ={}).embedding.dimension \
        == 512
    remote = load_settings(write(tmp_path, "embedding:\n  provider: openai\n"
                                           "  model: my-own-model\n"), environ={})
    assert remote.embedding.model == "my-own-model"      # an API's models are its own


def test_cross_lingual_vectors_need_a_routed_multilingual_model(tmp_path):
    with pytest.raises(ConfigError, match=r"mindgraph\.yml:3: 'embedding\.cross_lingual_vectors'"
                                          r" gives every page a second vector .* no language "
                                          r"is routed here"):
        load_settings(write(tmp_path, "embedding:\n  languages: {}\n"
                                      "  cross_lingual_vectors: true\n"), environ={})
    assert load_settings(write(tmp_path, "embedding:\n  cross_lingual_vectors: true\n"),
                         environ={}).embedding.cross_lingual_vectors is True
    assert load_settings(write(tmp_path, "embedding:\n  provider: local\n"),
                         environ={}).embedding.cross_lingual_vectors is False


def test_a_bad_value_names_its_line_or_the_variable_that_set_it(tmp_path):
    with pytest.raises(ConfigError, match=r"mindgraph\.yml:4: 'compile\.concurrency' must be "
                                          r"at least 1"):
        load_settings(write(tmp_path, "# mine\ncompile:\n  provider: offline\n"
                                      "  concurrency: 0\n"), environ={})
    with pytest.raises(ConfigError, match=r"mindgraph\.yml:3: 'adapters\[0\]\.cache_ttl_s' "):
        load_settings(write(tmp_path, "adapters:\n  - name: notes\n    cache_ttl_s: -1\n"),
                      environ={})
    with pytest.raises(ConfigError, match=r"^Environment variable MINDGRAPH_EMBEDDING__MODEL: "
                                          r"'embedding\.model' is 'foo'"):
        load_settings(write(tmp_path, "embedding:\n  model: all-MiniLM-L6-v2\n"),
                      environ={"MINDGRAPH_EMBEDDING__MODEL": "foo"})
    with pytest.raises(ConfigError, match=r"^Environment variable MINDGRAPH_EMBEDDING__LANGUAGES"
                                          r": 'embedding\.languages' maps ja"):
        load_settings(tmp_path, environ={"MINDGRAPH_EMBEDDING__LANGUAGES": "{ja: e5-large}"})


def test_the_head_deadline_and_the_connection_cap_are_checked(tmp_path):
    settings = load_settings(tmp_path, environ={})
    assert settings.serve.header_timeout_s == 10.0 and settings.serve.max_connections == 1000
    with pytest.raises(ConfigError, match=r"'serve\.header_timeout_s' must be above 0"):
        load_settings(write(tmp_path, "serve:\n  header_timeout_s: 0\n"), environ={})
    with pytest.raises(ConfigError, match=r"'serve\.max_connections' must be at least 1"):
        load_settings(write(tmp_path, "serve:\n  max_connections: 0\n"), environ={})
    ok = load_settings(write(tmp_path, "serve:\n  header_timeout_s: 2.5\n"
                                       "  max_connections: 50\n"), environ={})
    assert ok.serve.header_timeout_s == 2.5 and ok.serve.max_connections == 50
