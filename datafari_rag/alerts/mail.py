"""An alert's new documents by e-mail, when ``alerts.smtp.host`` names an SMTP server (else
nothing is sent: the runs are recorded and shown by ``GET …/alerts/<id>/runs``)."""

from __future__ import annotations

import logging
import smtplib
from email.message import EmailMessage
from typing import Any

from ..config import Settings
from .store import AlertSpec

log = logging.getLogger(__name__)


def message(settings: Settings, spec: AlertSpec, documents: list[dict[str, Any]]) -> EmailMessage:
    mail = EmailMessage()
    mail["From"] = settings.alerts_smtp_from
    mail["To"] = spec.mail
    mail["Subject"] = spec.subject or "Datafari alert"
    lines = [f"{len(documents)} new document(s) for the search {spec.keyword!r}:", ""]
    lines += [f"- {d.get('title') or d.get('id')}: {d.get('url') or d.get('id')}" for d in documents]
    mail.set_content("\n".join(lines))
    return mail


def send_alert(settings: Settings, spec: AlertSpec, documents: list[dict[str, Any]]) -> bool:
    """Whether the alert's mail was handed to the SMTP server."""
    if not settings.alerts_smtp_host or not spec.mail:
        return False
    try:
        with smtplib.SMTP(settings.alerts_smtp_host, settings.alerts_smtp_port, timeout=10) as smtp:
            smtp.send_message(message(settings, spec, documents))
    except (OSError, smtplib.SMTPException) as exc:
        log.warning("alert mail to %s not sent: %s", spec.mail, exc)
        return False
    return True
