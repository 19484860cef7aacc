"""The sidecar's log: one structured line per event (JSON by default, python-json-logger), and no
error storm — repeated errors of one label are rate limited.

An outage makes every request fail with the same label; one line per request would write tens of
thousands of identical lines and bury what changed. :class:`RateLimit` lets through at most
``logs.errorsPerLabel`` records of each label per ``logs.window`` seconds, counts the others, and
the first record let through afterwards says how many were left out (``suppressed``).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable

from pythonjsonlogger.json import JsonFormatter

from .config import Settings

FIELDS = "%(asctime)s %(levelname)s %(name)s %(message)s"
# Each RAG question, logged only with rag.enable.logs (read per request, so a change at run time
# applies): at INFO, which the package's logger (WARNING, as Python leaves it) would drop.
QUESTIONS = logging.getLogger("datafari_rag.questions")


class RateLimit(logging.Filter):
    """At most ``limit`` records per ``label`` (a record's ``label`` attribute) per ``window``
    seconds; records without a label always pass."""

    def __init__(self, limit: int, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.limit, self.window, self.clock = limit, window, clock
        self._seen: dict[str, tuple[float, int, int]] = {}  # label -> (window start, passed, suppressed)
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        label = getattr(record, "label", None)
        if label is None:
            return True
        now = self.clock()
        with self._lock:
            start, passed, suppressed = self._seen.get(label, (now, 0, 0))
            if now - start >= self.window:
                start, passed = now, 0
            if passed >= self.limit:
                self._seen[label] = (start, passed, suppressed + 1)
                return False
            self._seen[label] = (start, passed + 1, 0)
        if suppressed:
            record.suppressed = suppressed
            record.msg = f"{record.msg} (and {suppressed} more like it not logged)"
        return True


def configure(logger: logging.Logger, settings: Settings) -> None:
    """``logger`` (the app's) writes to stderr in ``logs.format``, rate limited per label."""
    handler = logging.StreamHandler(sys.stderr)
    if settings.logs_format == "json":
        handler.setFormatter(JsonFormatter(FIELDS, rename_fields={"asctime": "time", "levelname": "level"}))
    else:
        handler.setFormatter(logging.Formatter("[%(asctime)s] %(levelname)s in %(name)s: %(message)s"))
    logger.handlers = [handler]
    logger.filters = [f for f in logger.filters if not isinstance(f, RateLimit)]
    logger.addFilter(RateLimit(settings.logs_errors_per_label, settings.logs_window))
    QUESTIONS.setLevel(logging.INFO)
