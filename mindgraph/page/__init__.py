"""Pages and links: the model, the markdown parser and Obsidian-style link resolution.

This layer imports nothing of ours but ``errors``.
"""

from .model import Link, Page, Section

__all__ = ["Link", "Page", "Section"]
