"""Who the user is, which tokens they hold, and the ACL filter every Solr read carries."""

from .acl import UserAccess, acl_params

__all__ = ["UserAccess", "acl_params"]
