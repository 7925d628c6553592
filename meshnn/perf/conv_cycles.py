"""The busiest core of a conv2d program, block by block: how tt-metal's conv2d kernels hand each block on
through their circular buffers (:class:`ConvCycles`, filled by :func:`meshnn.perf.conv.conv_cycles` with each
part's cycles over all its blocks).  The kernels: ttnn/cpp/ttnn/operations/conv/conv2d/device/kernels/
(reader_conv_activations_padded_with_halo_3x3_weights_v2.cpp and its 2-D multicast form, conv_bmm_tilize.cpp,
the weights' writers, activation_reader_width_sharded.cpp).  Units: chip cycles.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ConvCycles:
    """The busiest core's cycles by part, over all its blocks: the activation ``reader`` (its reads,
    and the multicast of its tilized blocks), the ``weights`` (DRAM reads and their multicast),
    ``tilize``, the ``matmul`` (multiplies, partials, bias, the output's pack); ``blocks`` the blocks
    they come in (each an even share); ``split``: two readers share the activation reads (tt-metal's
    split reader: the weights' reader reads its half of each block's activations first);
    ``multicast``: the activation reader's wait for the blocks other cores multicast (not split);
    ``rounds``: width-sharded (activation_reader_width_sharded.cpp), the core reads and tilizes its own
    block once, then every block arrives in a round of its own: the sender waits for every receiver's
    semaphore (sent once the receiver's activation buffer has room, i.e. once its matmul freed the block
    one, or two double-buffered, before), multicasts the block and then a semaphore; ``handshake`` those
    two one-way NoC latencies, cycles a round (block-sharded, each multicast block's); ``group``: block-sharded,
    the K blocks that come from one tilize of the core's own rows (the grid row's cores, one block each);
    ``reuse_width``: activation reuse (height-sharded), the tile rows of one output image width (0: no reuse), and
    ``reuse_taps`` the kernel rows each position of a reader's first image width reads (later ones read one)."""

    reader: float
    weights: float
    tilize: float
    matmul: float
    blocks: int
    split: bool
    multicast: float = 0.0
    rounds: bool = False
    handshake: float = 0.0
    group: int = 1
    reuse_width: int = 0
    reuse_taps: int = 1

    def total(self, act_double: bool, weights_double: bool) -> float:
        """The core's cycles, block by block as conv2d's kernels hand them on through their circular
        buffers: the activation reader fills a block once the compute has tilized the block one (two,
        double-buffered) before it; the compute tilizes a block once it is read and the matmul before
        it is done, and multiplies it once its weights are in; the weights reader reads a block once the
        matmul has freed the block one (two) before it.  With the split reader the weights' RISC-V reads
        half of each block's activations before that block's weights."""
        n = max(1, self.blocks)
        r, w, t, mm = self.reader / n, self.weights / n, self.tilize / n, self.matmul / n
        cast = self.multicast / n
        da, dw = (2 if act_double else 1), (2 if weights_double else 1)
        if self.reuse_width:
            return self._reuse_total(n)
        if self.rounds:
            return self._rounds_total(n, da, dw)
        if cast:
            return self._multicast_total(n, da, dw)
        tilized: list[float] = []
        done: list[float] = []
        reader_free = other_free = 0.0  # the activation reader's RISC-V, the weights reader's
        for i in range(n):
            act_free = tilized[i - da] if i >= da else 0.0
            weight_free = done[i - dw] if i >= dw else 0.0
            if self.split:
                reader_free = max(reader_free, act_free) + r / 2
                half = max(other_free, act_free) + r / 2
                read = max(reader_free, half)
                other_free = max(half, weight_free) + w
            else:
                reader_free = read = max(reader_free, act_free) + r
                other_free = max(other_free, weight_free) + w
            tilized.append(max(read, done[-1] if done else 0.0) + t)
            done.append(max(tilized[-1], other_free) + mm)
        return done[-1]

    def _multicast_total(self, n: int, da: int, dw: int) -> float:
        """:meth:`total` where each K block arrives by multicast from the core that holds its channels
        (block-sharded: reader_conv_activations_2d_mcast_padded_with_halo_3x3_weights_v2.cpp, conv_bmm_tilize.cpp):
        the blocks come in groups of :attr:`group` (one kernel row of a height block, one block from each core of
        the grid row); at a group's start the core reads its own rows (split over two readers) and the compute
        tilizes them; then each block of the group is multicast by its sender once every receiver has reserved
        room in its activation buffer (``da`` blocks: so once its matmul of the block ``da`` before is done) and
        signalled (:attr:`handshake`), and multiplied once it and its weights (``dw`` blocks buffered) are in."""
        groups = max(1, n // max(1, self.group))
        r, t = self.reader / groups, self.tilize / groups
        w, mm, cast = self.weights / n, self.matmul / n, self.multicast / n
        done: list[float] = []
        reader_free = other_free = tilized = 0.0
        for i in range(n):
            if i % max(1, self.group) == 0:  # the group's own rows read and tilized
                last = done[-1] if done else 0.0
                if self.split:
                    reader_free = max(reader_free, tilized) + r / 2
                    other_free = max(other_free, tilized) + r / 2
                    read = max(reader_free, other_free)
                else:
                    reader_free = read = max(reader_free, tilized) + r
                tilized = max(read, last) + t
            receivers_free = done[i - da] if i >= da else 0.0
            reader_free = max(tilized, reader_free, receivers_free) + self.handshake + cast
            other_free = max(other_free, done[i - dw] if i >= dw else 0.0) + w
            done.append(max(reader_free, other_free, done[-1] if done else 0.0) + mm)
        return done[-1]

    def _rounds_total(self, n: int, da: int, dw: int) -> float:
        """:meth:`total` for :attr:`rounds`: the own block read and tilized first, then ``n`` rounds, each
        multicast once the previous round is out and every receiver's buffer is free (``da``: the act
        buffer's blocks); the weights' reads (``dw`` blocks buffered) beside them; each block's matmul
        once its round and its weights are in."""
        w, mm, cast = self.weights / n, self.matmul / n, self.multicast / n
        arrived = self.reader + self.tilize
        done: list[float] = []
        other_free = 0.0
        for i in range(n):
            act_free = done[i - da] if i >= da else 0.0
            arrived = max(arrived, act_free) + self.handshake + cast
            other_free = max(other_free, done[i - dw] if i >= dw else 0.0) + w
            done.append(max(arrived, other_free, done[-1] if done else 0.0) + mm)
        return done[-1]

    def _reuse_total(self, n: int) -> float:
        """:meth:`total` for activation reuse (:attr:`reuse_width`; ``n`` the core's tile rows, its one activation
        block): the split reader's two RISC-Vs each read their half of the rows (the first ``n - n // 2``, the rest),
        a tile row at a time (read_sticks_activation_reuse: each tile row's reads end in a read barrier and a push);
        the activation buffer holds one output image width, which a reader reserves whole before each image width's
        reads (pass_to_the_next_image_width), so it waits there for the compute to tilize its previous width; the
        first image width of each reader reads every kernel row (:attr:`reuse_taps` the cost of a later row).  The
        compute tilizes the two readers' rows by turns (tilize_in_reuse_split_reader) and only then runs the whole
        block's matmul (conv_bmm_tilize.cpp); the weights' RISC-V reads the weights after its activation half."""
        halves = (n - n // 2, n // 2) if self.split else (n,)
        width, taps = max(1, self.reuse_width), max(1, self.reuse_taps)
        weight = [[taps if j < width else 1 for j in range(h)] for h in halves]
        unit = self.reader / max(1, sum(map(sum, weight)))  # a later tile row's reads, cycles
        t = self.tilize / max(1, n)
        reader_free = [0.0] * len(halves)
        tilized: list[list[float]] = [[] for _ in halves]
        compute = 0.0
        for j in range(max(halves)):
            for k, rows in enumerate(halves):
                if j >= rows:
                    continue
                start = reader_free[k]
                if j and j % width == 0:  # the whole buffer reserved: the previous width tilized
                    start = max(start, tilized[k][j - 1])
                reader_free[k] = start + unit * weight[k][j]
                compute = max(compute, reader_free[k]) + t
                tilized[k].append(compute)
        weights_in = reader_free[-1] + self.weights
        return max(compute, weights_in) + self.matmul
