"""providers/llm layer."""
