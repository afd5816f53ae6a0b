"""Timeline: how a concept evolved, from the dated notes that mention it."""
