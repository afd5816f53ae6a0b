"""Trusted knowledge: provenance, verification levels, evidence-checked claims, freshness.

record (the three frontmatter records) · claims (a page's checkable statements) · offline
(the deterministic validator) · levels (verdict → status and level) · freshness (stale
triggers) · citations (what a page cites) · evidence (gathering it) · fetch/ (the fetchers:
local files, URLs, the evidence cache) · writeback (metadata-only edits) · plan, ledger, scope
(the approval gate) · audit · mix (the trust mix and disputed pages for `stats` and `check`) ·
answer (trust in search results) · service (what the core wires).
"""
