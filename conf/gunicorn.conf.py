"""gunicorn settings of the sidecar (``datafari-rag serve``).

Requests spend most of their time waiting on Solr and the LLM, so threads (gthread) rather
than processes carry the concurrency; two processes use both cores.
"""

import os

bind = f"{os.environ.get('DATAFARI_RAG_SERVER_HOST', '127.0.0.1')}:{os.environ.get('DATAFARI_RAG_SERVER_PORT', '8080')}"
workers = int(os.environ.get("DATAFARI_RAG_WORKERS", "2"))
worker_class = "gthread"
threads = int(os.environ.get("DATAFARI_RAG_THREADS", "32"))
timeout = 120
graceful_timeout = 10
accesslog = "-"
