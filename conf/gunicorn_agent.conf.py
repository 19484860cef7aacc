"""gunicorn settings of the local AI agent (``datafari-rag agent``), read from the product's
Settings (``agent.*`` keys).

One process holds the model (90 MB of weights) and computes on every core; a few threads let
Solr's per-chunk calls queue without being refused.
"""

from datafari_rag.config import load_settings
from datafari_rag.paths import control_socket

_settings = load_settings()
bind = f"{_settings.agent_host}:{_settings.agent_port}"
workers = 1
worker_class = "gthread"
threads = _settings.agent_threads
timeout = 300
preload_app = True
control_socket = control_socket(_settings.agent_control_socket, "agent", _settings.agent_port)
control_socket_disable = control_socket is None
