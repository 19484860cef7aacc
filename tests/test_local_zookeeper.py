"""The local runtime's ZooKeeper layout, read without starting anything: one server beside a
single node, an ensemble of three for a cluster, every port distinct, each server's zoo.cfg."""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

from datafari_rag.solr.runtime import cluster
from datafari_rag.solr.zookeeper import connect_string, ensemble


def test_a_single_node_runs_its_own_zookeeper_where_the_embedded_one_kept_its_data(tmp_path: Path) -> None:
    with mock.patch.dict(os.environ, {"DATAFARI_RAG_VAR": str(tmp_path)}):
        local = cluster(8983, 1)
    [node] = local.nodes
    assert local.zookeepers == [] and node.zk_host is None
    assert node.zookeeper is not None and node.zookeeper.address == "127.0.0.1:9983"
    assert node.zookeeper.data_dir == tmp_path / "solr" / "zoo_data" and not node.zookeeper.peers
    assert "\nserver." not in node.zookeeper.config()  # standalone


def test_several_nodes_share_an_ensemble_of_three(tmp_path: Path) -> None:
    with mock.patch.dict(os.environ, {"DATAFARI_RAG_VAR": str(tmp_path)}):
        local = cluster(8983, 2)
    assert [zk.address for zk in local.zookeepers] == ["127.0.0.1:9983", "127.0.0.1:9984", "127.0.0.1:9985"]
    assert {node.zk_host for node in local.nodes} == {"127.0.0.1:9983,127.0.0.1:9984,127.0.0.1:9985"}
    assert all(node.zookeeper is None for node in local.nodes)  # no node owns the cluster's state
    ports = local.ports()
    assert len(ports) == len(set(ports)) == 2 + 3 * 3
    assert local.urls == "http://127.0.0.1:8983/solr,http://127.0.0.1:8984/solr"


def test_each_server_of_an_ensemble_names_every_peer_and_itself(tmp_path: Path) -> None:
    servers = ensemble(8983, 3, tmp_path)
    assert [zk.myid for zk in servers] == [1, 2, 3]
    for zk in servers:
        config = zk.config()
        assert (
            f"clientPort={zk.client_port}" in config
            and f"dataDir={tmp_path / f'zookeeper{zk.myid}' / 'data'}" in config
        )
        assert "server.1=127.0.0.1:10983:11983" in config and "server.3=127.0.0.1:10985:11985" in config
        assert "clientPortAddress=127.0.0.1" in config and "srvr" in config  # local only; srvr tells the mode
    assert connect_string(servers) == "127.0.0.1:9983,127.0.0.1:9984,127.0.0.1:9985"


def test_the_first_server_adopts_the_state_of_a_cluster_whose_zookeeper_ran_inside_node_1(tmp_path: Path) -> None:
    servers = ensemble(8983, 3, tmp_path)
    assert servers[0].adopt == tmp_path / "solr" / "zoo_data"
    assert all(zk.adopt is None for zk in servers[1:])
