"""The store (one database for users, conversations, workflows, index jobs, alerts) and what it keeps."""

from __future__ import annotations

from dataclasses import dataclass

from .keys import CONVERSATIONS, STORE, key


@dataclass(frozen=True)
class StoreSettings:
    """The relational store (store.url)."""

    store_url: str = key(
        STORE,
        "store.url",
        "",
        "SQLAlchemy URL of the store (users, conversations, workflows, index jobs, alerts, saved settings): "
        "empty, SQLite in the var directory (store.db; conversations.db when an older install left one); "
        "production: postgresql+psycopg://user:password@host/database.",
    )


@dataclass(frozen=True)
class ConversationSettings:
    """Conversations kept on the server, alerts and their mail."""

    conversations_max_per_user: int = key(
        CONVERSATIONS, "conversations.maxPerUser", 500, "Conversations one user may keep.", minimum=1
    )
    conversations_max_turns: int = key(
        CONVERSATIONS, "conversations.maxTurns", 500, "Questions one conversation may hold.", minimum=1
    )
    alerts_interval: int = key(
        CONVERSATIONS,
        "alerts.schedule.interval",
        60,
        "Seconds between two looks for DatafariUI alerts that are due (each sidecar worker looks; a run is "
        "claimed in the store, so an alert runs once). 0: alerts do not run in the server (datafari-rag "
        "alerts run, e.g. from cron).",
        minimum=0,
        maximum=86400,
    )
    alerts_smtp_host: str = key(
        CONVERSATIONS, "alerts.smtp.host", "", "SMTP server alerts are mailed through (empty: runs recorded only)."
    )
    alerts_smtp_port: int = key(CONVERSATIONS, "alerts.smtp.port", 25, "Its port.", minimum=1, maximum=65535)
    alerts_smtp_from: str = key(
        CONVERSATIONS, "alerts.smtp.from", "datafari-rag@localhost", "The From address of alert mails."
    )
