"""Who the user is, which tokens they hold, and the ACL filter every Solr read carries."""

from .acl import UserAccess, acl_params
from .errors import SecurityError

__all__ = ["SecurityError", "UserAccess", "acl_params"]
