"""Coverage: how much of a codebase the wiki knows (units, mentions, report, CI gate)."""
