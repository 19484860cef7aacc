"""Datafari's RAG errors: a label, a code, and the human sentence a chat UI shows."""

from __future__ import annotations

MESSAGES = {
    "ragErrorNotEnabled": (422, "Sorry, it seems the feature is not enabled."),
    "ragBadRequest": (
        422,
        "Sorry, It appears there is an issue with the request. Please try again later, "
        "and if the problem remains, contact an administrator.",
    ),
    "ragNoFileFound": (428, "Sorry, I couldn't find any relevant document to answer your request."),
    "ragNoValidAnswer": (428, "Sorry, I could not find an answer to your question."),
    "ragFileNotFound": (428, "Sorry, the requested file does not exist, or is not available."),
    "ragTechnicalError": (
        500,
        "Sorry, I met a technical issue. Please try again later, and if the problem remains, contact an administrator.",
    ),
    "summarizationErrorNotEnabled": (422, "Sorry, it seems the feature is not enabled."),
    "summarizationBadRequest": (
        422,
        "Sorry, it appears there is an issue with the request. Please try again "
        "later, and if the problem remains, contact an administrator.",
    ),
    "summarizationNoFileFound": (422, "Sorry, I cannot find this document."),
    "summarizationEmptyFile": (422, "Sorry, I am unable to generate a summary, since the file has no content."),
    "summarizationTechnicalError": (
        500,
        "Sorry, I met a technical issue. Please try again later, and if the problem remains, contact an administrator.",
    ),
    "updateBadRequest": (400, "The update request is not valid."),
    "updateTechnicalError": (500, "The update could not be written to the index."),
}


class RagError(Exception):
    """A failure the client is told about with Datafari's error JSON."""

    def __init__(self, label: str, reason: str | None = None) -> None:
        super().__init__(reason or label)
        self.label = label
        self.code, self.message = MESSAGES[label]
        self.reason = reason
