"""Who the user is, which tokens they hold, and the ACL filter every Solr read carries.

Nothing here knows of Flask or of the web API: ``api/http/auth.py`` resolves each request's access
with :func:`resolve_access`, and ``solr/search.py`` adds :func:`acl_params` to every read.
"""

from .acl import UserAccess, acl_params
from .identity import resolve_access

__all__ = ["UserAccess", "acl_params", "resolve_access"]
