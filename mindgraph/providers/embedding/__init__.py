"""providers/embedding layer."""
