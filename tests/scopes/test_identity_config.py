"""The scopes API: identities from mindgraph.yml, tokens from the environment, the folder
mapping, the View and the request → identity step."""

import pytest

from mindgraph.config import load_settings
from mindgraph.errors import ConfigError, Unauthenticated
from mindgraph.page.parse import parse_page
from mindgraph.scopes import LOCAL, Authenticator, View, load_scopes

A = "a" * 40
B = "b" * 40

CONFIG = """\
scopes:
  identities:
    - {name: alice, tenant: acme, agent: alice, teams: [search], token_env: MG_T_ALICE}
    - {name: bob, tenant: acme, agent: bob, teams: [ops], token_env: MG_T_BOB}
    - {name: carol, tenant: globex, agent: carol, token_env: MG_T_CAROL}
"""


def scopes_of(tmp_path, text=CONFIG):
    (tmp_path / "mindgraph.yml").write_text(text)
    return load_scopes(load_settings(tmp_path, environ={}))


def test_identities_come_from_the_config_and_tokens_from_the_environment(tmp_path):
    scopes = scopes_of(tmp_path)
    assert scopes.enabled and [i.name for i in scopes.identities] == ["alice", "bob", "carol"]
    alice = scopes.identity("alice")
    assert (alice.tenant, alice.agent, alice.teams) == ("acme", "alice", frozenset({"search"}))
    auth = Authenticator(scopes, environ={"MG_T_ALICE": A, "MG_T_BOB": B,
                                          "MG_T_CAROL": "c" * 32})
    assert auth.required
    assert auth.identity_for(f"Bearer {A}") == alice
    assert auth.identity_for(f"bearer {B}").name == "bob"
    for header in (None, "", f"Bearer {A[:-1]}", f"Basic {A}", A):
        with pytest.raises(Unauthenticated, match="Authorization: Bearer"):
            auth.identity_for(header)


def test_no_identities_means_everyone_is_the_local_identity(tmp_path):
    scopes = scopes_of(tmp_path, "")
    assert not scopes.enabled and scopes.local == LOCAL
    assert Authenticator(scopes).identity_for(None) == LOCAL
    legacy = Authenticator(scopes, ("MINDGRAPH_API_TOKEN", A))
    assert legacy.identity_for(f"Bearer {A}") == LOCAL
    with pytest.raises(Unauthenticated):
        legacy.identity_for(None)


@pytest.mark.parametrize("environ, message", [
    ({"MG_T_ALICE": "short", "MG_T_BOB": B, "MG_T_CAROL": "c" * 32},
     r"mindgraph.yml: the token in MG_T_ALICE \(identity 'alice'\) has 5 characters; use at "
     r"least 32 random printable ones, e\.g\. export MG_T_ALICE="),
    ({"MG_T_ALICE": A, "MG_T_BOB": A, "MG_T_CAROL": "c" * 32},
     r"identities 'alice' \(MG_T_ALICE\) and 'bob' \(MG_T_BOB\) have the same token.*export "
     r"MG_T_BOB="),
    ({"MG_T_ALICE": A, "MG_T_BOB": B},
     r"identity 'carol' reads its token from MG_T_CAROL, which is not set\. Export it"),
])
def test_a_short_reused_or_missing_token_is_a_configuration_error(tmp_path, environ, message):
    with pytest.raises(ConfigError, match=message):
        Authenticator(scopes_of(tmp_path), environ=environ)


def test_the_server_token_may_not_be_an_identity_token_either(tmp_path):
    with pytest.raises(ConfigError, match="'alice' .* and 'local' .*same token"):
        Authenticator(scopes_of(tmp_path), ("MINDGRAPH_API_TOKEN", A),
                      environ={"MG_T_ALICE": A, "MG_T_BOB": B, "MG_T_CAROL": "c" * 32})


@pytest.mark.parametrize("text, message", [
    ("scopes:\n  identities:\n    - {name: a, tenant: t, token: xyz, token_env: X}\n",
     r"scopes.identities\[0\]: unknown key 'token'.*Tokens are never written here"),
    ("scopes:\n  identities:\n    - {name: a, token_env: X}\n", r"'tenant' must be a name"),
    ("scopes:\n  identities:\n    - {name: a, tenant: t, token_env: X}\n"
     "    - {name: a, tenant: t, token_env: Y}\n", r"the name 'a' is used twice"),
    ("scopes:\n  identities:\n    - {name: a, tenant: t, token_env: X}\n"
     "    - {name: b, tenant: t, token_env: X}\n", r"'a' and 'b' both read their token from X"),
    ("scopes:\n  local: zed\n", r"scopes.local is 'zed', which is not an identity"),
    ("scopes:\n  folders:\n    - {path: '{tenant}/personal', scope: personal}\n",
     r"scopes.folders\[0\]: a personal rule needs a \{agent\} folder"),
    ("scopes:\n  folders:\n    - {path: 'notes', scope: shared}\n",
     r"give the tenant once .* not neither"),
    ("scopes:\n  folders:\n    - {path: '{tenant}/x', scope: public}\n",
     r"'scope' is 'public'; it must be one of personal, team, shared, frontmatter"),
])
def test_bad_scopes_sections_name_the_file_and_the_fix(tmp_path, text, message):
    with pytest.raises(ConfigError, match=r"mindgraph\.yml.*" + message):
        scopes_of(tmp_path, text)


def page(path, frontmatter=""):
    return parse_page(f"---\n{frontmatter}\n---\n# T\n\ntext\n" if frontmatter
                      else "# T\n\ntext\n", path)


def test_the_folder_mapping_and_what_each_identity_sees(tmp_path):
    scopes = scopes_of(tmp_path, CONFIG + "  folders:\n"
                       "    - {path: '{tenant}/personal/{agent}', scope: personal}\n"
                       "    - {path: '{tenant}/team/{team}', scope: team}\n"
                       "    - {path: '{tenant}/shared', scope: shared}\n"
                       "    - {path: '{tenant}/inbox', scope: frontmatter}\n"
                       "    - {path: 'handbook', tenant: acme, scope: shared}\n")
    pages = [page("acme/personal/alice/diary.md"), page("acme/personal/bob/diary.md"),
             page("acme/team/search/plan.md"), page("acme/team/ops/runbook.md"),
             page("acme/shared/handbook.md"), page("globex/shared/secret.md"),
             page("acme/inbox/n1.md", "scope: team\nteam: ops"),
             page("acme/inbox/n2.md", "scope: personal"),          # no agent: undetermined
             page("handbook/rules.md"), page("loose.md"),
             page("x.md", "sources:\n- {path: acme/shared/a.md}\n- {path: globex/shared/b.md}")]
    seen = {who: sorted(View(scopes.identity(who), scopes.mapping).visible(pages))
            for who in ("alice", "bob", "carol")}
    assert seen == {
        "alice": ["acme/personal/alice/diary.md", "acme/shared/handbook.md",
                  "acme/team/search/plan.md", "handbook/rules.md"],
        "bob": ["acme/inbox/n1.md", "acme/personal/bob/diary.md", "acme/shared/handbook.md",
                "acme/team/ops/runbook.md", "handbook/rules.md"],
        "carol": ["globex/shared/secret.md"]}
    assert len(View(LOCAL, scopes.mapping).visible(pages)) == len(pages)
    undetermined = [p.path for p in pages if View(LOCAL, scopes.mapping).scope_of(p) is None]
    assert undetermined == ["acme/inbox/n2.md", "loose.md", "x.md"]


def test_a_page_records_its_raw_note_and_that_decides(tmp_path):
    scopes = scopes_of(tmp_path)
    moved = page("elsewhere/note.md", "sources:\n- {path: acme/team/search/note.md}")
    assert View(LOCAL, scopes.mapping).scope_of(moved).describe() == "acme/team/search"
    assert View(scopes.identity("alice"), scopes.mapping).sees(moved)
    assert not View(scopes.identity("bob"), scopes.mapping).sees(moved)


def test_a_new_note_of_a_scope_has_a_folder(tmp_path):
    scopes = scopes_of(tmp_path)
    alice = scopes.identity("alice")
    assert scopes.mapping.folder_for(alice.personal_scope()) == "acme/personal/alice"
    from mindgraph.scopes import DocumentScope
    assert scopes.mapping.folder_for(DocumentScope("acme", "team", "search")) == \
        "acme/team/search"
    assert scopes.mapping.folder_for(DocumentScope("acme", "shared")) == "acme/shared"
