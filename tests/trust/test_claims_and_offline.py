"""Claims of a page, and the offline validator's verdicts on them."""

from mindgraph.trust.claims import evidence_sentences, page_claims
from mindgraph.trust.offline import analyse, check_claim, verdict_of

PAGE = """---
title: Sync
tags: [a]
---
> [!summary]
> A summary that is no claim.

Obsidian Sync keeps notes in step. It encrypts them end to end!

## Limits
- Each vault holds up to 10 GB of [[Storage|storage]].
- Version history lasts 12 months.

```python
print("code is no claim")
```
> A quote is no claim either.
| a | table |
See also:

- → 2
"""


def test_claims_are_sentences_and_list_items_outside_code_callouts_and_frontmatter():
    texts = [c.text for c in page_claims(PAGE)]
    assert texts == ["Obsidian Sync keeps notes in step.", "It encrypts them end to end!",
                     "Each vault holds up to 10 GB of storage.",
                     "Version history lasts 12 months.", "See also:"]
    assert page_claims(PAGE)[2].line == 11


def _check(claim, evidence):
    return check_claim(claim, [analyse(s) for s in evidence_sentences(evidence)])


def test_supported_when_a_sentence_carries_the_words_and_agrees_on_numbers_and_negation():
    evidence = "Version history lasts for 12 months.\n\nEach vault holds up to 10 GB."
    got = _check("Version history lasts 12 months.", evidence)
    assert got.verdict == "supported" and got.quote == "Version history lasts for 12 months."
    assert _check("Each vault holds up to 10 GB.", evidence).supported


def test_a_different_number_or_date_contradicts():
    got = _check("Version history lasts 6 months.", "Version history lasts 12 months.")
    assert got.verdict == "contradicted" and got.quote == "Version history lasts 12 months."
    assert _check("Released on 2024-05-01.", "Released on 2024-05-02.").verdict == \
        "contradicted"


def test_a_negation_that_disagrees_contradicts():
    assert _check("Sync doesn't encrypt files.", "Sync encrypts files.").verdict == \
        "contradicted"
    assert _check("Sync does not encrypt files.", "Sync doesn't encrypt files.").supported


def test_missing_words_are_unsupported_and_the_verdict_needs_every_claim():
    missing = _check("Sync runs on a toaster.", "Sync encrypts files.")
    assert missing.verdict == "unsupported" and missing.quote == ""
    ok = _check("Sync encrypts files.", "Sync encrypts files.")
    assert verdict_of([ok]) == "pass"
    assert verdict_of([ok, missing]) == "warn"
    assert verdict_of([ok, _check("Sync never encrypts files.", "Sync encrypts files.")]) \
        == "fail"
    assert verdict_of([]) == "unverifiable"


def test_a_clause_of_an_evidence_sentence_can_support_a_claim():
    evidence = "On iOS, this message displays as the following error: Null is not an object."
    assert _check("On iOS, this message displays as the following error:", evidence).supported


def test_japanese_claims_are_checked_on_character_pairs():
    evidence = "Obsidianはノートをローカルに保存します。同期は有料です。"
    assert _check("Obsidianはノートをローカルに保存します。", evidence).supported
    assert _check("Obsidianはノートをクラウドに保存します。", evidence).verdict == "unsupported"
