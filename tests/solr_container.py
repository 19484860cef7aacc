"""A Solr 9.10 container with the project's plugin, for machines with a Docker engine.

The image is docker/solr.Dockerfile (official solr:9.10 + the text-to-vector plugin). It runs
with the host's network so that Solr reaches the agent the tests serve on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from testcontainers.core.container import DockerContainer
from testcontainers.core.image import DockerImage
from testcontainers.core.waiting_utils import wait_for_logs

from datafari_rag.paths import PROJECT_ROOT
from datafari_rag.testing.servers import free_port


@contextmanager
def solr_container() -> Iterator[str]:
    port = free_port()
    with DockerImage(
        path=str(PROJECT_ROOT), dockerfile_path="docker/solr.Dockerfile", tag="datafari-rag-solr:test"
    ) as image:
        container = (
            DockerContainer(str(image))
            .with_kwargs(network_mode="host")
            .with_env("SOLR_JETTY_HOST", "127.0.0.1")
            .with_command(f"solr-foreground -c -p {port}")
        )
        with container:
            wait_for_logs(container, "Started Server", timeout=180)
            yield f"http://127.0.0.1:{port}/solr"
