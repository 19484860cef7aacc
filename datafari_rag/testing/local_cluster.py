"""A local SolrCloud for tests: nodes and ZooKeeper servers on ports nobody else holds, state in
a folder of the test's own, stopped whatever the test did to it."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from ..solr.runtime import LocalCluster, cluster
from .servers import free_port


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


@contextmanager
def local_cluster(folder: Path, nodes: int, timeout: float = 180, **options: object) -> Iterator[LocalCluster]:
    """Starts ``cluster(port, nodes, **options)`` on a base port whose every port is free, with
    ``DATAFARI_RAG_VAR`` at ``folder``; stops every process on exit."""
    with mock.patch.dict(os.environ, {"DATAFARI_RAG_VAR": str(folder)}):
        while True:
            local = cluster(free_port(), nodes, **options)  # type: ignore[arg-type]
            if all(_free(p) for p in local.ports()):
                break
        try:
            local.start(timeout)
            yield local
        finally:
            local.stop()
