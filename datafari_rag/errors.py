"""Every error a client can be told about: Datafari's labels, codes and sentences, in one place.

One exception, :class:`DatafariError`, carries a label from :data:`LABELS`; one Flask handler
(``api/http/errors.py``) turns it into Datafari's error JSON. The status policy:

- errors of Datafari's RAG contract (``rag*``, ``summarization*``, and 7.0's ``ai*`` and
  ``agentic*`` labels) answer **HTTP 200**
  with the code in the JSON, as Datafari does; ``server.errors.httpStatus=true`` sends the code as
  the HTTP status too;
- every other error (identity, the authority service, updates, routing) answers with its code as
  the HTTP status: those callers are not Datafari's chat UI, and proxies must see the refusal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

_TRY_LATER = "Please try again later, and if the problem remains, contact an administrator."


@dataclass(frozen=True)
class Label:
    code: int
    message: str  # the sentence a chat UI shows
    datafari: bool = False  # part of Datafari's RAG contract: HTTP 200 unless server.errors.httpStatus


LABELS: dict[str, Label] = {
    # Datafari's RAG API
    "ragErrorNotEnabled": Label(422, "Sorry, it seems the feature is not enabled.", True),
    "ragBadRequest": Label(422, f"Sorry, It appears there is an issue with the request. {_TRY_LATER}", True),
    "ragNoFileFound": Label(428, "Sorry, I couldn't find any relevant document to answer your request.", True),
    "ragNoValidAnswer": Label(428, "Sorry, I could not find an answer to your question.", True),
    "ragFileNotFound": Label(428, "Sorry, the requested file does not exist, or is not available.", True),
    "ragTechnicalError": Label(500, f"Sorry, I met a technical issue. {_TRY_LATER}", True),
    "ragForbiddenTopic": Label(422, "Sorry, I cannot answer questions on this topic.", True),
    # Datafari's summarization API
    "summarizationErrorNotEnabled": Label(422, "Sorry, it seems the feature is not enabled.", True),
    "summarizationBadRequest": Label(422, f"Sorry, it appears there is an issue with the request. {_TRY_LATER}", True),
    "summarizationNoFileFound": Label(422, "Sorry, I cannot find this document.", True),
    "summarizationEmptyFile": Label(
        422, "Sorry, I am unable to generate a summary, since the file has no content.", True
    ),
    "summarizationTechnicalError": Label(500, f"Sorry, I met a technical issue. {_TRY_LATER}", True),
    # Datafari 7.0's AI API (POST ai): the code travels as a string, as 7.0 sends it
    "aiErrorNotEnabled": Label(422, "Sorry, it seems the feature is not enabled.", True),
    "aiBadRequest": Label(400, f"Sorry, It appears there is an issue with the request. {_TRY_LATER}", True),
    "aiTechnicalError": Label(500, f"Sorry, I met a technical issue. {_TRY_LATER}", True),
    "agenticErrorNotEnabled": Label(422, "Sorry, it seems the feature is not enabled.", True),
    # identity and access rights
    "authenticationFailed": Label(401, "Sorry, you need to sign in to use this service."),
    "accessForbidden": Label(403, "Sorry, this request is not allowed."),
    "authorityUnavailable": Label(
        503, "Sorry, your access rights cannot be checked right now. Please try again later."
    ),
    # conversations kept on the server
    "conversationBadRequest": Label(400, "The conversation request is not valid."),
    "conversationNotFound": Label(404, "Sorry, this conversation does not exist."),
    "conversationLimit": Label(
        409, "Sorry, the limit is reached: delete an old conversation, or start a new one, to go on."
    ),
    "conversationStoreUnavailable": Label(
        503, "Sorry, conversations cannot be reached right now. Please try again later."
    ),
    # local users
    "userBadRequest": Label(400, "The user request is not valid."),
    "userNotFound": Label(404, "Sorry, this user does not exist."),
    "userExists": Label(409, "Sorry, this username is taken."),
    "loginFailed": Label(401, "Sorry, the username or the password is wrong."),
    "loginThrottled": Label(429, "Too many failed sign-ins: please wait before trying again."),
    # workflows and their API keys; the settings administrators change at run time
    "workflowBadRequest": Label(400, "The workflow is not valid."),
    "workflowNotFound": Label(404, "Sorry, this workflow does not exist."),
    "workflowExists": Label(409, "Sorry, a workflow already has this name."),
    "apiKeyNotFound": Label(404, "Sorry, this API key does not exist."),
    "settingsBadRequest": Label(400, "The settings are not valid."),
    "jobBadRequest": Label(400, "The indexing job is not valid."),
    "jobNotFound": Label(404, "Sorry, this indexing job does not exist."),
    "loginNotEnabled": Label(422, "Sign-in with a local account is not enabled."),
    # the update endpoint
    "updateBadRequest": Label(400, "The update request is not valid."),
    "updateTechnicalError": Label(500, "The update could not be written to the index."),
    # HTTP routing
    "badRequest": Label(400, "The request is not valid."),
    "notFound": Label(404, "There is nothing at this address."),
    "documentNotFound": Label(404, "Sorry, this document does not exist, or you may not read it."),
    "savedSearchBadRequest": Label(400, "The saved search is not valid."),
    "savedSearchNotFound": Label(404, "Sorry, this saved search does not exist."),
    "savedSearchExists": Label(409, "Sorry, a saved search already has this name."),
    "alertBadRequest": Label(400, "The alert is not valid."),
    "alertNotFound": Label(404, "Sorry, this alert does not exist."),
    "methodNotAllowed": Label(405, "This method is not allowed at this address."),
    "requestTooLarge": Label(413, "The request is too large."),
    "uriTooLong": Label(414, "The request's address is too long."),
    "unsupportedMediaType": Label(415, "This content type is not supported here."),
    "headersTooLarge": Label(431, "The request's headers are too large."),
    "httpError": Label(500, f"Sorry, I met a technical issue. {_TRY_LATER}"),
}

# The sentences a chat UI shows when nothing answers, in the answer's language (``lang``); the
# others, and every label in another language, keep Datafari's English sentence.
TRANSLATIONS: dict[str, dict[str, str]] = {
    "fr": {
        "ragNoFileFound": "Désolé, je n'ai trouvé aucun document pertinent pour répondre à votre demande.",
        "ragNoValidAnswer": "Désolé, je n'ai pas pu trouver de réponse à votre question.",
        "ragFileNotFound": "Désolé, le document demandé n'existe pas, ou n'est pas accessible.",
        "summarizationNoFileFound": "Désolé, je ne trouve pas ce document.",
        "summarizationEmptyFile": "Désolé, je ne peux pas résumer ce document : il n'a pas de contenu.",
    }
}

# Werkzeug's HTTP errors by status; any other status keeps its code under "httpError".
HTTP_LABELS = {
    400: "badRequest",
    404: "notFound",
    405: "methodNotAllowed",
    413: "requestTooLarge",
    414: "uriTooLong",
    415: "unsupportedMediaType",
    431: "headersTooLarge",
}


class DatafariError(Exception):
    """A failure the client is told about with Datafari's error JSON. ``reason`` says what went wrong
    in words fit for the client; ``detail`` (an upstream service's own text, an internal address)
    goes to the log only."""

    def __init__(
        self,
        label: str,
        reason: str | None = None,
        code: int | None = None,
        detail: str | None = None,
        lang: str | None = None,
        message: str | None = None,  # instead of the label's sentence (e.g. the guard's guidance)
        headers: dict[str, str] | None = None,  # e.g. Retry-After
    ) -> None:
        super().__init__(reason or label)
        self.label = label
        entry = LABELS[label]
        message = message or TRANSLATIONS.get(lang or "", {}).get(label, entry.message)
        self.code, self.message, self.datafari = code or entry.code, message, entry.datafari
        self.reason = reason
        self.detail = detail
        self.headers = headers or {}
        self.usage: dict[str, Any] | None = None  # the tokens the request used before it failed

    def http_status(self, errors_as_http_status: bool) -> int:
        """The HTTP status under the policy above."""
        return self.code if errors_as_http_status or not self.datafari else 200

    def body(self) -> dict[str, Any]:
        """Datafari's error JSON."""
        error: dict[str, Any] = {"code": self.code, "label": self.label}
        if self.reason:
            error["reason"] = self.reason
        return {"status": "ERROR", "content": {"message": self.message, "documents": [], "error": error}}


# --- request bodies that are not what they must be (pydantic models) -----------------------


def refusal(exc: ValidationError) -> str:
    """What was wrong with a body, in a sentence per field (unknown fields together)."""
    unknown = sorted(_path(e["loc"]) for e in exc.errors() if e["type"] == "extra_forbidden")
    said = [f"Unknown field(s): {', '.join(unknown)}."] if unknown else []
    for error in exc.errors():
        if error["type"] != "extra_forbidden":
            said.append(_sentence(error))
    return " ".join(dict.fromkeys(said))


# what each kind of pydantic error says, with the field's name and the error's context
SENTENCES = {
    "greater_than_equal": "'{name}' is at least {ge}.",
    "less_than_equal": "'{name}' is at most {le}.",
    "float_type": "'{name}' is a number.",
    "union_tag_invalid": "'{name}' has a 'kind' among {expected_tags}.",
    "union_tag_not_found": "'{name}' has a 'kind'.",
    "checked": "{reason}",  # a check's own sentence (PydanticCustomError("checked", "{reason}", …))
    "missing": "'{name}' is required.",
    "bool_type": "'{name}' is true or false.",
    "string_type": "'{name}' is text.",
    "int_type": "'{name}' is a whole number.",
    "int_from_float": "'{name}' is a whole number.",
    "list_type": "'{name}' is a list.",
    "dict_type": "'{name}' is an object.",
    "too_short": "'{name}' holds at least {min_length} item{min_s}.",
    "string_too_short": "'{name}' has at least {min_length} character{min_s}.",
    "string_too_long": "'{name}' has at most {max_length} character{max_s}.",
    "string_pattern_mismatch": "'{name}' does not have the expected form ({pattern}).",
    "literal_error": "'{name}' is one of {expected}.",
}


def _sentence(error: Any) -> str:
    name = _path(error["loc"]) or "the body"
    template = SENTENCES.get(error["type"])
    if template is None:
        return f"'{name}': {error['msg']}."
    ctx = dict(error.get("ctx") or {})
    for bound in ("min", "max"):  # "1 character", "8 characters"
        ctx[f"{bound}_s"] = "" if ctx.get(f"{bound}_length") == 1 else "s"
    return template.format(name=name, **ctx)


def _path(loc: tuple[Any, ...]) -> str:
    """A field's place in the body: ``chunker.overlap``, ``queryEnhancers.0.multiQuery.count``."""
    return ".".join(str(part) for part in loc)
