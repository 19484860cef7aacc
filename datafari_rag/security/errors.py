"""Security failures: the request is refused, nothing is retrieved (fail closed)."""

from __future__ import annotations

LABELS = {
    401: ("authenticationFailed", "Sorry, you need to sign in to use this service."),
    403: ("accessForbidden", "Sorry, this request is not allowed."),
    503: ("authorityUnavailable", "Sorry, your access rights cannot be checked right now. Please try again later."),
}


class SecurityError(Exception):
    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.label, self.message = LABELS[code]
        self.reason = reason
