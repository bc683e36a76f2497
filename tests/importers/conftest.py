"""Shared helpers: write Chakra ET files the way Chakra's own tools frame them."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)


@pytest.fixture
def et_writer(tmp_path):
    """``write(rank, nodes, prefix="trace")``: a GlobalMetadata then the nodes, varint length-delimited."""
    from netsim.importers.chakra_schema import GlobalMetadata
    from netsim.importers.etstream import join_messages

    def write(rank, nodes, prefix="trace"):
        path = tmp_path / f"{prefix}.{rank}.et"
        msgs = [GlobalMetadata(version="0.0.4").SerializeToString()] + [n.SerializeToString() for n in nodes]
        path.write_bytes(join_messages(msgs))
        return path
    return write
