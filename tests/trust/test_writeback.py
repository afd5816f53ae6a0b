"""Write-back changes only the verification and evidence keys: every other byte stays."""

import random
import shutil

import pytest
import yaml

from mindgraph.trust.writeback import WritebackError, set_record_keys

VER = {"status": "verified", "level": 2, "validator": "offline:v1",
       "last_validated": "2026-01-10", "revalidate_after": "2026-04-10",
       "body_sha256": "ab" * 32, "references": ["raw:a.md"]}
EVI = {"status": "grounded", "source_count": 1, "sources": [
    {"kind": "raw_note", "ref": "raw:日本語/メモ.md", "sha256": "cd" * 32, "available": True,
     "claims": [{"claim": "It's: \"quoted\" #1", "supported": True, "verdict": "supported",
                 "quote": "It's: \"quoted\" #1"}]}]}
CLEAR = {"verification": None, "evidence": None}


def test_existing_keys_are_replaced_in_place_and_the_rest_kept_byte_for_byte():
    text = ("---\r\ntitle: 'A'   # kept comment\r\nverification:\r\n  status: old\r\n"
            "  level: 0\r\n\r\ntags:\r\n- x\r\n---\r\nBody\r\n")
    new = set_record_keys(text, {"verification": VER, "evidence": EVI})
    assert new.startswith("---\r\ntitle: 'A'   # kept comment\r\nverification:\r\n")
    assert "\r\n\r\ntags:\r\n- x\r\nevidence:\r\n" in new and new.endswith("---\r\nBody\r\n")
    assert "\n" not in new.replace("\r\n", "")
    assert set_record_keys(new, CLEAR) == set_record_keys(text, CLEAR) == \
        "---\r\ntitle: 'A'   # kept comment\r\n\r\ntags:\r\n- x\r\n---\r\nBody\r\n"


def test_a_page_without_frontmatter_gets_one_and_a_bom_is_kept():
    assert set_record_keys("Body\n", {"evidence": {"status": "none"}}) == \
        "---\nevidence:\n  status: none\n---\nBody\n"
    new = set_record_keys("\ufeff---\ntitle: A\n---\nB\n", {"evidence": {"status": "none"}})
    assert new == "\ufeff---\ntitle: A\nevidence:\n  status: none\n---\nB\n"


def test_other_keys_are_refused_and_unusual_frontmatter_is_left_alone():
    with pytest.raises(WritebackError, match="may only set"):
        set_record_keys("---\ntitle: A\n---\n", {"title": "B"})
    with pytest.raises(WritebackError, match="not a valid YAML mapping"):
        set_record_keys("---\ntitle: [unclosed\n---\nB\n", {"evidence": {}})
    # a repeated key: writing would let the other copy win, so nothing is written
    with pytest.raises(WritebackError, match="would change other"):
        set_record_keys("---\nevidence: 1\ntitle: A\nevidence: 2\n---\n", {"evidence": {}})


def _random_record(rng):
    level = rng.randint(0, 3)
    claims = [{"claim": rng.choice(["a: b", "x — y", "'q'", "中文", "#tag", "- item"]),
               "supported": rng.random() < 0.5, "verdict": "supported", "quote": "q"}
              for _ in range(rng.randint(0, 4))]
    return {"verification": dict(VER, level=level, status=rng.choice(
                ["unverified", "reviewed", "verified", "disputed"])),
            "evidence": dict(EVI, sources=[dict(EVI["sources"][0], claims=claims)])}


def test_property_every_page_of_the_real_vault_keeps_every_byte_outside_the_two_keys(
        corpora, tmp_path):
    vault = tmp_path / "vault"
    shutil.copytree(corpora / "obsidian-help", vault)
    rng = random.Random(14)
    pages = sorted(vault.rglob("*.md"))
    assert len(pages) > 800
    for page in pages:
        original = page.read_bytes()
        text = original.decode("utf-8")
        values = _random_record(rng)
        try:
            new = set_record_keys(text, values, page.name)
        except WritebackError:
            pytest.fail(f"{page}: write-back refused a real page")
        page.write_bytes(new.encode("utf-8"))
        again = set_record_keys(new, _random_record(rng), page.name)   # a second verify
        baseline = set_record_keys(text, CLEAR)
        if not text.startswith("---"):
            # the only bytes added besides the two keys: the frontmatter's own two lines
            assert baseline == text and new.endswith("---\n" + text), page
            assert set_record_keys(again, CLEAR) == "---\n---\n" + text, page
        else:
            assert set_record_keys(again, CLEAR) == baseline, page
            assert baseline.encode("utf-8") == original or \
                any(k in text for k in ("\nverification:", "\nevidence:")), page
        head = yaml.safe_load(again.split("---", 2)[1])
        assert set(values) <= set(head), page
