"""`mindgraph propagate`: when a fact changes, draft the update of every page that still
states it, and apply the drafts only with a person's approval.

A fact change is a statement of a page that was replaced by a similar one since the last
snapshot of the wiki's statements (a raw note was edited and recompiled, or a page edited), or
a correction a person states (``--old`` / ``--new``). The pages it affects are those with a
statement like the old one that still carries what changed. Each gets a draft: offline, the
changed numbers substituted when only numbers changed, otherwise a callout marking the
passage and saying what changed; with an LLM, the passage rewritten. The drafts form a plan
with a digest, as the trust write-back's; only ``--apply PLAN --approve DIGEST`` writes, to
wiki/ only, with a scope check and a ledger run. An applied change makes the page's trust
stale (its content changed).
"""
