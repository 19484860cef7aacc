"""The clients an app shares (Solr, settings), created once per app and reached through one accessor."""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app

from .config import Settings
from .solr import SolrClient


@dataclass
class Services:
    settings: Settings
    solr: SolrClient


def build_services(settings: Settings) -> Services:
    auth = (settings.solr_username, settings.solr_password) if settings.solr_username else None
    return Services(settings=settings, solr=SolrClient(settings.solr_url, settings.solr_timeout, auth))


def get_services() -> Services:
    return current_app.extensions["datafari_rag"]
