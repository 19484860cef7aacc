"""What a request handler reaches: the app's :class:`Services`, built once by ``create_app``."""

from __future__ import annotations

from flask import current_app

from ..services import Services


def get_services() -> Services:
    return current_app.extensions["datafari_rag"]
