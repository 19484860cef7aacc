"""Who is asking: the access of the current request.

Until identity providers are configured, every request is anonymous, and an anonymous user
reads only fully public documents (all six ACL fields ``__nosecurity__``): fail closed.
"""

from __future__ import annotations

from .acl import UserAccess


def current_access() -> UserAccess:
    return UserAccess.anonymous()
