"""gunicorn settings of the sidecar (``datafari-rag serve``), read from the product's Settings
(``server.*`` keys of conf/rag.properties, or their DATAFARI_RAG_* variables).

Requests spend most of their time waiting on Solr and the LLM, so threads (gthread) rather
than processes carry the concurrency; two processes use both cores. Each process has enough
threads to hold every request of a burst by itself, because connections are not spread evenly
between processes (measured: 32 threads per process served 64 concurrent 1-second LLM calls at
0.47 of the ideal rate, 64 threads at bench/concurrency.py's figure); answers may hold all but
``server.reservedThreads`` of them (see datafari_rag/api/capacity.py).
"""

from datafari_rag.api.gunicorn_errors import install as json_errors
from datafari_rag.config import load_settings
from datafari_rag.paths import control_socket

json_errors()  # gunicorn's own refusals (414, 431, 400) in Datafari's error JSON, not HTML

_settings = load_settings()
bind = f"{_settings.server_host}:{_settings.server_port}"
workers = _settings.server_workers
worker_class = "gthread"
threads = _settings.server_threads
timeout = 120
graceful_timeout = 10
# No access log by default (gunicorn's default too): formatting each line costs 0.6 ms of CPU per
# request here (measured: 1.1 vs 1.7 ms for a minimal request); the proxy in front usually logs.
accesslog = _settings.server_access_log or None
# One control socket per server (gunicorn's default path is shared by every master of a user).
control_socket = control_socket(_settings.server_control_socket, "sidecar", _settings.server_port)
control_socket_disable = control_socket is None
