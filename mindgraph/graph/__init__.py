"""graph layer."""
