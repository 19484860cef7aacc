"""What a request handler reaches: the :class:`Services` of the current configuration (the
process's settings with what administrators changed since, see ``live.py``)."""

from __future__ import annotations

from flask import current_app

from ...live import LiveServices
from ...services import Services


def get_services() -> Services:
    return live().current()


def live() -> LiveServices:
    return current_app.extensions["live"]
