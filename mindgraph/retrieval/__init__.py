"""retrieval layer."""
