"""gunicorn settings of the sidecar (``datafari-rag serve``), read from the product's Settings
(``server.*`` keys of conf/rag.properties, or their DATAFARI_RAG_* variables).

Requests spend most of their time waiting on Solr and the LLM, so threads (gthread) rather
than processes carry the concurrency; two processes use both cores. Each process has enough
threads to hold every request of a burst by itself, because connections are not spread evenly
between processes (measured: 32 threads per process served 64 concurrent 1-second LLM calls at
0.47 of the ideal rate, 64 threads at bench/concurrency.py's figure); answers may hold all but
``server.reservedThreads`` of them (see datafari_rag/api/http/capacity.py).
"""

import math
import os
import shutil

from datafari_rag.paths import var_dir

# GET /metrics adds up every worker's values: each writes them under this master's folder, set
# before anything imports prometheus-client (loading the settings does); a worker that ends is
# marked dead so that its live gauges stop counting, and folders of masters gone are removed.
_metrics = var_dir() / "metrics" / f"sidecar-{os.getpid()}"
os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(_metrics)


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


for _folder in _metrics.parent.glob("sidecar-*") if _metrics.parent.is_dir() else []:
    if not _alive(_folder.name.removeprefix("sidecar-")) or _folder == _metrics:
        shutil.rmtree(_folder, ignore_errors=True)
_metrics.mkdir(parents=True)

from datafari_rag.api.http.gunicorn_errors import install as json_errors  # noqa: E402
from datafari_rag.config import load_settings  # noqa: E402
from datafari_rag.paths import control_socket  # noqa: E402

_settings = load_settings()
json_errors()  # gunicorn's own refusals (414, 431, 400) in Datafari's error JSON, not HTML

bind = f"{_settings.server_host}:{_settings.server_port}"
workers = _settings.server_workers
worker_class = "gthread"
threads = _settings.server_threads
timeout = 120
# a stopped worker serves the answers under way to their end (they end by llm.deadline), then exits
graceful_timeout = math.ceil(_settings.graceful_seconds)  # gunicorn takes whole seconds
# No access log by default (gunicorn's default too): formatting each line costs 0.6 ms of CPU per
# request here (measured: 1.1 vs 1.7 ms for a minimal request); the proxy in front usually logs.
accesslog = _settings.server_access_log or None
# One control socket per server (gunicorn's default path is shared by every master of a user).
control_socket = control_socket(_settings.server_control_socket, "sidecar", _settings.server_port)
control_socket_disable = control_socket is None


def child_exit(server, worker):  # type: ignore[no-untyped-def]
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def post_worker_init(worker):  # type: ignore[no-untyped-def]
    """Each worker looks for DatafariUI alerts that are due (alerts.schedule.interval), keeps its
    indexing jobs' heartbeat (taking over those of a worker gone), and reads the model its answers
    embed with before its first answer needs it."""
    from datafari_rag.app import keep_jobs, schedule_alerts
    from datafari_rag.indexing.embedder import preload

    schedule_alerts(worker.wsgi)
    keep_jobs(worker.wsgi)  # and looks after its indexing jobs, and those whose worker is gone
    preload(_settings)
