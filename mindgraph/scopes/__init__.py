"""Identity and visibility: who is asking, and which pages that identity may see.

    identity.py    Identity (tenant, agent, teams, is_local) and the all-seeing LOCAL
    identities.py  the ``scopes:`` section of mindgraph.yml → Scopes (tokens from the env)
    mapping.py     folder → tenant and scope (personal / team / shared, or frontmatter)
    view.py        View: "may this identity see this page"
    auth.py        the serving side: Authorization header → Identity
"""

from .auth import Authenticator, identity_for_request
from .identities import MIN_TOKEN_CHARS, Scopes, load_scopes
from .identity import LOCAL, Identity
from .mapping import DocumentScope, FolderMapping
from .view import View

__all__ = ["Authenticator", "DocumentScope", "FolderMapping", "Identity", "LOCAL",
           "MIN_TOKEN_CHARS", "Scopes", "View", "identity_for_request", "load_scopes"]
