"""stores layer."""
