"""The error catalogue and its status policy."""

from __future__ import annotations

import pytest

from datafari_rag.errors import HTTP_LABELS, LABELS, DatafariError


@pytest.mark.parametrize("label", sorted(LABELS))
def test_every_label_has_a_code_and_a_sentence(label: str) -> None:
    error = DatafariError(label, "why")
    assert 400 <= error.code <= 599 and error.message.strip()
    body = error.body()
    assert body == {
        "status": "ERROR",
        "content": {
            "message": error.message,
            "documents": [],
            "error": {"code": error.code, "label": label, "reason": "why"},
        },
    }


def test_datafari_rag_errors_answer_200_unless_asked_and_others_their_code() -> None:
    rag = DatafariError("ragNoFileFound")
    assert rag.http_status(errors_as_http_status=False) == 200
    assert rag.http_status(errors_as_http_status=True) == 428
    denied = DatafariError("authenticationFailed")
    assert denied.http_status(False) == denied.http_status(True) == 401
    contract = ("rag", "summarization", "ai", "agentic")  # Datafari's RAG (6.2) and AI (7.0) labels
    assert all(LABELS[label].datafari for label in LABELS if label.startswith(contract))
    assert not any(LABELS[label].datafari for label in LABELS if not label.startswith(contract))


def test_http_errors_keep_their_status() -> None:
    assert all(LABELS[label].code == code for code, label in HTTP_LABELS.items())
    assert DatafariError("httpError", "URI too long", 414).http_status(False) == 414


def test_no_reason_means_no_reason_field() -> None:
    assert "reason" not in DatafariError("ragTechnicalError").body()["content"]["error"]
