"""Ratings of answers: ``PUT conversations/<id>/blocks/<turn>/feedback`` (thumbs up or down, an
optional comment; the conversation's owner only) and ``GET feedback`` (mine; an administrator's:
everyone's, or one user's with ``user``).

A rating shows its answer only to a reader who may still read every document the answer came
from (as a reopened conversation does): an administrator reading everyone's ratings sees the
question and the rating of a turn built from documents they may not read, not its answer."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from ...conversations.feedback import FeedbackStore
from ...errors import DatafariError
from ..http.answers import FeedbackAnswer, RatedAnswer
from ..http.context import get_services
from ..http.contract import REFUSALS, Param, endpoint, json, refusals
from ..http.errors import ok_content
from ..http.shapes import AnswerRating, read
from ..http.store_calls import store_call
from .conversations import _owner, readable_ids, whose, withheld

bp = Blueprint("feedback", __name__)
LISTING = (
    Param("user", description="administrators: that user's ratings"),
    Param("rating", {"enum": ["up", "down"]}, "only these ratings"),
)


def _store() -> FeedbackStore:
    return store_call(get_services().store.feedback)


def as_read(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ratings as the current user may see them: an answer from a document they cannot read
    (now) is withheld."""
    readable = readable_ids({i for item in items for i in item["source_ids"]})
    shown = []
    for item in items:
        ids = item.pop("source_ids")
        shown.append(item if set(ids) <= readable else withheld(item))
    return shown


@bp.put("/conversations/<conversation_id>/blocks/<block_id>/feedback")
@endpoint(
    "Rate an answer of one of my conversations: up or down, with an optional comment",
    {200: json(RatedAnswer, "the rating as kept"), **refusals(400, 401, 403, 404, 413, 415, 503)},
    AnswerRating,
)
def rate(conversation_id: str, block_id: str) -> tuple[Response, int]:
    owner = _owner()
    body = read(AnswerRating, "conversationBadRequest")
    kept = store_call(_store().rate, owner, conversation_id, block_id, body.rating, body.comment)
    return ok_content({"feedback": as_read([kept])[0]}), 200


@bp.get("/feedback")
@endpoint(
    "Ratings of answers, the latest first: mine; an administrator's: everyone's",
    {200: json(FeedbackAnswer, "the ratings and how many up and down"), **refusals(*REFUSALS)},
    params=LISTING,
)
def listing() -> tuple[Response, int]:
    who = whose(LISTING, "ratings")
    rating = request.args.get("rating")
    if rating not in (None, "up", "down"):
        raise DatafariError("conversationBadRequest", "rating is 'up' or 'down'.")
    store = _store()
    items = store_call(store.listed, who, rating)
    return ok_content({"feedback": as_read(items), "totals": store_call(store.counts, who)}), 200
