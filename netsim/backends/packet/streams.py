"""Independent random streams of the packet network: one per marking point, lossy link and spraying node.

Every random draw of the packet backend comes from a stream of its own,
derived from the run's seed and a *stable key* naming the part of the network
that draws:

* ``port:A->B`` — the egress port from A to B: its RED/ECN marking decisions
  (at enqueue or dequeue) and the random loss (``error_rate``) of packets
  crossing that link;
* ``spray:N`` — node N's per-packet next-hop choice (``routing=spray``);
* ``flow:ID`` — reserved for a flow's own draws (no transport draws today:
  every congestion-control algorithm netsim ships is deterministic).

A stream is a :class:`random.Random` (the fastest per-draw generator in
pure Python, as before) seeded from :class:`numpy.random.SeedSequence` with
the run seed as entropy and a 64-bit BLAKE2b digest of the key as spawn key
(Python's ``hash`` of a string changes between processes; a digest does not).
So the draws of one marking point depend only on (seed, its key, the packets
it saw): skipping or memoising another part of the network (issue #21's
fast-forward) does not shift them, and the outputs do not depend on the order
in which the network was built or on the output folder.

Left out: statistical independence beyond what SeedSequence guarantees
(distinct spawn keys give streams with no known correlation; O'Neill, PCG
report 2014, and NumPy's SeedSequence documentation).
"""
from __future__ import annotations

import hashlib
import random

import numpy as np

#: width of a key digest in bytes (64 bits: two 32-bit words of the spawn key)
KEY_DIGEST_BYTES = 8
#: 32-bit words of SeedSequence state used to seed one :class:`random.Random` (128 bits)
STATE_WORDS = 4
#: the run seed is taken modulo 2**64 (SeedSequence entropy is a non-negative integer)
SEED_MODULUS = 1 << 64


def key_words(key: str) -> tuple[int, int]:
    """The 64-bit BLAKE2b digest of ``key`` as two 32-bit words (a SeedSequence spawn key).

    >>> key_words("port:a->b") == key_words("port:a->b"), key_words("port:a->b") == key_words("port:b->a")
    (True, False)
    """
    d = hashlib.blake2b(key.encode("utf-8"), digest_size=KEY_DIGEST_BYTES).digest()
    return int.from_bytes(d[:4], "little"), int.from_bytes(d[4:], "little")


def stream_seed(run_seed: int, key: str) -> int:
    """The integer seed of the stream named ``key`` in a run seeded ``run_seed`` (128 bits)."""
    ss = np.random.SeedSequence(entropy=int(run_seed) % SEED_MODULUS, spawn_key=key_words(key))
    words = ss.generate_state(STATE_WORDS, dtype=np.uint32)
    return sum(int(w) << (32 * i) for i, w in enumerate(words))


def make_stream(run_seed: int, key: str) -> random.Random:
    """A fresh generator for ``key`` (same run seed and key: the same draws, in any process)."""
    return random.Random(stream_seed(run_seed, key))


def port_key(port) -> str:
    """Stable key of an egress port (its marking point and its link's loss): ``port:A->B``."""
    return f"port:{port.name}->{port.peer_name}"


def assign_streams(net, run_seed: int) -> None:
    """Give every port of ``net`` its stream (``port.rng``) and every forwarder its spray stream (``node.rng``)."""
    for port in net.ports.values():
        port.rng = make_stream(run_seed, port_key(port))
    for name, node in net.nodes.items():
        if hasattr(node, "spray"):
            node.rng = make_stream(run_seed, f"spray:{name}")
