"""The cross-site refusal as a function: which Origin a state-changing request may come with."""

from __future__ import annotations

import pytest

from datafari_rag.api.http.origin import cross_site


@pytest.mark.parametrize(
    ("method", "headers", "allowed", "refused"),
    [
        ("POST", {"Host": "rag.example:8080"}, (), False),  # not a browser: no Origin
        ("GET", {"Host": "rag.example", "Origin": "https://evil.example"}, (), False),  # reads change nothing
        ("POST", {"Host": "rag.example:8080", "Origin": "http://rag.example:8080"}, (), False),
        ("POST", {"Host": "rag.example", "Origin": "https://rag.example"}, (), False),  # default port
        ("DELETE", {"Host": "RAG.example:443", "Origin": "https://rag.example"}, (), False),
        ("POST", {"Host": "[::1]:8080", "Origin": "http://[::1]:8080"}, (), False),
        (
            "POST",
            {"Host": "127.0.0.1:9", "X-Forwarded-Host": "search.example", "Origin": "https://search.example"},
            (),
            False,
        ),
        ("POST", {"Host": "127.0.0.1:9", "Origin": "https://ui.example"}, ("https://ui.example",), False),
        ("POST", {"Host": "rag.example", "Origin": "https://evil.example"}, (), True),
        ("PUT", {"Host": "rag.example", "Origin": "https://rag.example.evil.example"}, (), True),
        ("PATCH", {"Host": "rag.example:8080", "Origin": "http://rag.example:8081"}, (), True),  # another port
        ("POST", {"Host": "rag.example", "Origin": "null"}, (), True),  # a sandboxed frame or a file
        ("POST", {"Host": "rag.example", "Origin": "http://rag.example:x"}, (), True),
        ("POST", {"Host": "rag.example", "Origin": "https://evil.example"}, ("https://ui.example",), True),
    ],
)
def test_a_state_changing_request_from_another_sites_page_is_refused(
    method: str, headers: dict[str, str], allowed: tuple[str, ...], refused: bool
) -> None:
    refusal = cross_site(method, headers, allowed)
    assert (refusal is not None) is refused
    if refusal is not None:
        assert refusal.code == 403 and "server.allowedOrigins" in (refusal.reason or "")
