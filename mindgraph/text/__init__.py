"""Text handling shared by ingest and retrieval: the words of Chinese and Japanese text."""
