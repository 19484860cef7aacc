"""The clients an app shares (Solr, settings), created once per app and reached through one accessor."""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app

from .config import Settings
from .llm import LlmService, OpenAiLlmService
from .rag.pipeline import Pipeline
from .solr import SolrClient


@dataclass
class Services:
    settings: Settings
    solr: SolrClient
    llm: LlmService
    pipeline: Pipeline


def build_services(settings: Settings, llm: LlmService | None = None) -> Services:
    auth = (settings.solr_username, settings.solr_password) if settings.solr_username else None
    solr = SolrClient(settings.solr_url, settings.solr_timeout, auth)
    llm = llm or OpenAiLlmService(settings)
    return Services(settings=settings, solr=solr, llm=llm, pipeline=Pipeline(settings, solr, llm))


def get_services() -> Services:
    return current_app.extensions["datafari_rag"]
