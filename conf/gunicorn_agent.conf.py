"""gunicorn settings of the local AI agent (``datafari-rag agent``).

One process holds the model (90 MB of weights) and numpy uses both cores; a few threads let
Solr's per-chunk calls queue without being refused.
"""

import os

bind = f"{os.environ.get('DATAFARI_RAG_AGENT_HOST', '127.0.0.1')}:{os.environ.get('DATAFARI_RAG_AGENT_PORT', '8889')}"
workers = 1
worker_class = "gthread"
threads = int(os.environ.get("DATAFARI_RAG_AGENT_THREADS", "4"))
timeout = 300
preload_app = True
