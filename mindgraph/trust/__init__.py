"""Trusted knowledge: provenance, verification levels, evidence-checked claims, freshness.

record (the three frontmatter records) · claims (a page's checkable statements) · offline
(the deterministic validator) · levels (verdict → status and level) · freshness (stale
triggers) · evidence (what a page is checked against) · writeback (metadata-only edits) ·
plan, ledger, scope (the approval gate) · audit · service (what the core wires).
"""
