"""A socket between two MPI ranks (``ttnn.MeshSocket(device, socket_config)`` with the config's
``sender_rank`` and ``receiver_rank``): each rank makes its own end on its own mesh, as tt-metal's
multi-host programs do (a rank launched by tt-run opens its own mesh).

The sender rank's end allocates the sender's config pages, the receiver rank's end its config
pages and FIFO (:mod:`meshnn.mesh.socket`); the config words that name the peer's addresses stay 0
(the peer's memory is another process's).  A send moves, for each connection, its sender device's
shard bytes to the receiver rank over MPI (point to point, one message per send, tagged with the
socket's number among the sockets from that sender rank to that receiver rank, in the order the
two ranks make them); a send does not wait for its receive, a receive takes the sends in order.  A
receive whose send never comes raises after ``MESHNN_WAIT_TIMEOUT`` seconds naming the sender; a
send no receive takes is waited for as long when the program ends, then names the receiver.

Layers: imports :mod:`meshnn.errors`, :mod:`meshnn.distributed.context` and the socket's config.
"""

from __future__ import annotations

import threading

import numpy as np

from meshnn.distributed.context import get_context
from meshnn.errors import MeshnnValueError
from meshnn.mesh.socket_config import SocketConfig, SocketEndpoint

SOCKET_TAG_BASE = 1 << 12
"""MPI tags of sockets start here (the distributed context's own tags are small)."""

_COUNTS: dict[tuple[int, int], int] = {}
_COUNTS_LOCK = threading.Lock()


class RankChannel:
    """What a cross-rank socket's sends put and its receives take: one MPI message per send, from
    ``sender`` to ``receiver`` under ``tag``."""

    def __init__(self, sender: int, receiver: int, tag: int) -> None:
        self.sender, self.receiver, self.tag = sender, receiver, tag

    def put(self, payload: list[np.ndarray]) -> None:
        flat = np.concatenate([p.reshape(-1).view(np.uint8) for p in payload]) if payload else np.empty(0, np.uint8)
        op = f"ttnn.experimental.send_async (socket from rank {self.sender} to rank {self.receiver})"
        get_context().send_bytes(flat, self.receiver, self.tag, op)  # type: ignore[attr-defined]

    def take(self, op: str, sizes: list[int] | None = None) -> list[np.ndarray]:
        """The oldest send's shards, split into ``sizes`` bytes each (a payload of another size is
        refused naming both)."""
        what = f"ttnn.{op} (socket from rank {self.sender} to rank {self.receiver})"
        flat = get_context().recv_bytes(self.sender, self.tag, what)  # type: ignore[attr-defined]
        if sizes is None or flat.size != sum(sizes):
            raise MeshnnValueError(
                f"{what}: rank {self.sender} sent {flat.size} bytes; the output's connected shards hold "
                f"{sum(sizes or [])} bytes"
            )
        return list(np.split(flat, np.cumsum(sizes)[:-1])) if sizes else []


def rank_end(config: SocketConfig) -> SocketEndpoint:
    """This rank's end of ``config`` (the sender rank's: SENDER); a rank that is neither end, or a
    config whose ends are one rank, is refused by name."""
    context = get_context()
    sender, receiver = config.sender_rank, config.receiver_rank
    if sender is None or receiver is None:
        raise MeshnnValueError(
            "MeshSocket(device, socket_config): the config must name sender_rank and receiver_rank (a socket "
            "between two meshes of one process is made by ttnn.create_socket_pair)"
        )
    size = context.world_size
    if not (sender < size and receiver < size):
        raise MeshnnValueError(
            f"MeshSocket: sender_rank {sender} / receiver_rank {receiver} are not ranks of this run of {size} rank(s)"
        )
    if sender == receiver:
        raise MeshnnValueError(
            f"MeshSocket: sender_rank and receiver_rank are both {sender}; for two meshes of one rank use "
            "ttnn.create_socket_pair"
        )
    if context.rank not in (sender, receiver):
        raise MeshnnValueError(
            f"MeshSocket: rank {context.rank} is neither the sender rank ({sender}) nor the receiver rank "
            f"({receiver}) of this socket config"
        )
    return SocketEndpoint.SENDER if context.rank == sender else SocketEndpoint.RECEIVER


def rank_channel(config: SocketConfig) -> RankChannel:
    """The channel of the next socket from ``config``'s sender rank to its receiver rank (both
    ranks number their sockets between them in the order they make them)."""
    sender, receiver = config.sender_rank, config.receiver_rank
    with _COUNTS_LOCK:
        number = _COUNTS.get((sender, receiver), 0)  # type: ignore[arg-type]
        _COUNTS[(sender, receiver)] = number + 1  # type: ignore[index]
    return RankChannel(sender, receiver, SOCKET_TAG_BASE + number)  # type: ignore[arg-type]
