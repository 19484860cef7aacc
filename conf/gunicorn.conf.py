"""gunicorn settings of the sidecar (``datafari-rag serve``).

Requests spend most of their time waiting on Solr and the LLM, so threads (gthread) rather
than processes carry the concurrency; two processes use both cores. Each process has enough
threads to hold every request of a burst by itself, because connections are not spread evenly
between processes (measured: 32 threads per process served 64 concurrent 1-second LLM calls at
0.47 of the ideal rate, 64 threads at bench/concurrency.py's figure).
"""

import os

bind = f"{os.environ.get('DATAFARI_RAG_SERVER_HOST', '127.0.0.1')}:{os.environ.get('DATAFARI_RAG_SERVER_PORT', '8080')}"
workers = int(os.environ.get("DATAFARI_RAG_WORKERS", "2"))
worker_class = "gthread"
threads = int(os.environ.get("DATAFARI_RAG_THREADS", "64"))
timeout = 120
graceful_timeout = 10
# gunicorn's default: no access log. Formatting each line costs 0.6 ms of CPU per request here
# (measured: 1.1 vs 1.7 ms for a minimal request), a tenth of an ai/rag call's own CPU; the proxy
# in front usually logs access. DATAFARI_RAG_ACCESS_LOG=- (stdout) or a file path turns it on.
accesslog = os.environ.get("DATAFARI_RAG_ACCESS_LOG") or None
