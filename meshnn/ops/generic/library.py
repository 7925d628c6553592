"""The kernels meshnn runs, keyed by their source path in tt-metal's tree: each binds a kernel
descriptor's arguments on one core (:class:`KernelCall`) to its work there
(:class:`~meshnn.ops.generic.machine.Bound`), checking them and finding the buffers it addresses
first, so a bad program is refused before anything is written.

- ``reader_unary_interleaved_start_id.cpp`` (runtime args: source address, pages, first page;
  compile-time: the source's tensor-accessor args): pages ``first ..`` (``BACKWARDS``: downward)
  of the source, each the size of circular buffer 0's pages, pushed to circular buffer 0;
- ``writer_unary_interleaved_start_id.cpp`` (runtime: destination address, pages, first page;
  compile-time: the circular buffer, then the destination's accessor args): the pages popped from
  that circular buffer written to pages ``first ..`` of the destination;
- ``tt_metal/kernels/compute/eltwise_sfpu.cpp`` (compile-time: blocks, tiles a block): every tile
  popped from circular buffer 0, the unary ops of its ``SFPU_OP_CHAIN_0`` define applied
  (:mod:`~meshnn.ops.generic.sfpu_chain`) in one float32 computation rounded once into circular
  buffer 16's format, as meshnn's ``ttnn.exp`` etc. compute a tile, and pushed to 16;
- ttnn's unary ``.../eltwise/unary/device/kernels/compute/eltwise_sfpu.cpp`` (runtime: tiles): the
  same from circular buffer 0 to 2.

Layer: ops.  Imports errors, formats, tensor and the element-wise ops' tables and values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from meshnn.device.core import CoreCoord
from meshnn.errors import MeshnnValueError
from meshnn.formats.layout import Layout, Tile
from meshnn.ops.eltwise.functions import wide
from meshnn.ops.eltwise.unary_tables import DEFS, UNARY
from meshnn.ops.generic.machine import Bound, CBLayout, CircularBuffer, Memory, Role, not_run
from meshnn.ops.generic.sfpu_chain import Step, sfpu_chain
from meshnn.ops.signatures import REQUIRED
from meshnn.ops.values import store_elements, stored_elements
from meshnn.tensor.spec import TensorSpec

IS_DRAM = 1 << 1
"""The tensor accessor's DRAM bit (``ArgConfig.IS_DRAM``) in its first compile-time argument."""
SHARDED = 1 << 0


@dataclass(frozen=True)
class KernelCall:
    """A kernel descriptor on one core: its source, arguments, defines and the core's circular buffers."""

    source: str
    core: CoreCoord
    compile_time_args: tuple[int, ...]
    runtime_args: tuple[int, ...]
    defines: dict[str, str]
    cbs: dict[int, CBLayout]
    memory: Memory

    def where(self) -> str:
        return f"ttnn.generic_op: {self.source} on core {self.core}"

    def rt(self, count: int, names: str) -> tuple[int, ...]:
        if len(self.runtime_args) < count:
            raise MeshnnValueError(f"{self.where()} needs {count} runtime args ({names}), got {len(self.runtime_args)}")
        return self.runtime_args[:count]

    def ct(self, count: int, names: str) -> tuple[int, ...]:
        if len(self.compile_time_args) < count:
            got = len(self.compile_time_args)
            raise MeshnnValueError(f"{self.where()} needs {count} compile-time args ({names}), got {got}")
        return self.compile_time_args[:count]

    def cb(self, index: int) -> CBLayout:
        if index not in self.cbs:
            raise MeshnnValueError(
                f"{self.where()} uses circular buffer {index}, which the program has not on the core"
            )
        return self.cbs[index]

    def accessor(self, offset: int, address: int) -> int:
        """The io buffer a tensor accessor (compile-time args from ``offset``) at ``address`` reads."""
        (config,) = self.ct(offset + 1, "the tensor accessor's")[offset:]
        return self.memory.find(address, bool(config & IS_DRAM), self.where())


Binder = Callable[[KernelCall], Bound]


@dataclass(frozen=True)
class LibraryKernel:
    """A kernel meshnn knows: when it runs on its core, and how it binds."""

    role: Role
    bind: Binder


def _pages(call: KernelCall, start: int, count: int) -> range:
    if "BACKWARDS" in call.defines:
        return range(start, start - count, -1)
    return range(start, start + count)


def _reader(call: KernelCall) -> Bound:
    address, count, start = call.rt(3, "source address, pages, first page")
    source = call.accessor(0, address)
    cb = call.cb(0)
    spans = [call.memory.span(source, p, cb.page_size, call.where()) for p in _pages(call, start, count)]

    def run(cbs: dict[int, CircularBuffer], memory: Memory) -> None:
        queue = cbs[0]
        for lo, hi in spans:
            queue.push(memory.read(source, lo, hi))

    return Bound(Role.READER, run, {0: count}, {}, call.source)


def _writer(call: KernelCall) -> Bound:
    if "OUT_SHARDED" in call.defines:
        raise not_run(f"{call.where()}: OUT_SHARDED (a circular buffer in a tensor's L1)")
    address, count, start = call.rt(3, "destination address, pages, first page")
    (index,) = call.ct(1, "the circular buffer")
    target = call.accessor(1, address)
    cb = call.cb(index)
    spans = [call.memory.span(target, p, cb.page_size, call.where()) for p in _pages(call, start, count)]

    def run(cbs: dict[int, CircularBuffer], memory: Memory) -> None:
        queue = cbs[index]
        for lo, hi in spans:
            memory.write(target, lo, hi, queue.pop())

    return Bound(Role.WRITER, run, {}, {index: count}, call.source)


def tile_spec(cb: CBLayout, call: KernelCall) -> TensorSpec:
    """One tile of ``cb``'s format, checked to be its page."""
    spec = TensorSpec(cb.tile, cb.dtype, Layout.TILE, tile=Tile(cb.tile))
    if spec.compute_packed_buffer_size_bytes() != cb.page_size:
        raise MeshnnValueError(
            f"{call.where()}: circular buffer {cb.index}'s pages are {cb.page_size} B; a {cb.tile[0]}x{cb.tile[1]} "
            f"{cb.dtype} tile is {spec.compute_packed_buffer_size_bytes()} B"
        )
    return spec


def apply_chain(values: np.ndarray, steps: list[Step]) -> np.ndarray:
    """The unary ops of ``steps`` over decoded values, in turn (integers as meshnn's unary ops take them)."""
    x = values
    for step in steps:
        defn = DEFS[step.op]
        if x.dtype.kind in "iu":
            x = wide(x) if defn.integer else x.astype(np.float32)
        params = {p.name: p.default for p in defn.params if p.default is not REQUIRED} | step.params
        with np.errstate(all="ignore"):
            x = UNARY[step.op](x, **params)
    return x


def _cast(result: np.ndarray, spec: TensorSpec) -> np.ndarray:
    result = np.asarray(result)
    if spec.dtype.is_float or result.dtype.kind == "f":
        return result.astype(np.float32, copy=False)
    return result.astype(spec.dtype.numpy_dtype, copy=False)


def _sfpu(call: KernelCall, count: int, source: int, target: int) -> Bound:
    """``count`` tiles popped from circular buffer ``source``, the define's SFPU chain applied, pushed to ``target``."""
    steps = sfpu_chain(call.defines, f"generic_op: {call.source}")
    for step in steps:
        if step.op not in DEFS:
            raise not_run(f"{call.where()}: the unary op {step.op}")
    src, dst = call.cb(source), call.cb(target)
    in_spec, out_spec = tile_spec(src, call), tile_spec(dst, call)

    def run(cbs: dict[int, CircularBuffer], memory: Memory) -> None:
        if count == 0:
            return
        pages = np.stack([cbs[source].pop() for _ in range(count)])  # (tiles, devices, bytes)
        k = pages.shape[1]
        values = stored_elements(pages.reshape(count * k, -1), in_spec)
        out = np.empty((count * k, dst.page_size), np.uint8)
        with np.errstate(all="ignore"):
            store_elements(_cast(apply_chain(values, steps), out_spec), out_spec, out)
        for i in range(count):
            cbs[target].push(out[i * k : (i + 1) * k])

    return Bound(Role.COMPUTE, run, {target: count}, {source: count}, call.source)


def _eltwise_sfpu(call: KernelCall) -> Bound:
    """tt-metal's ``eltwise_sfpu.cpp``: compile-time blocks and tiles a block, 0 -> 16."""
    if "SFPU_BINARY_OP" in call.defines:
        raise not_run(f"{call.where()}: the binary form (SFPU_BINARY_OP)")
    blocks, per_block = call.ct(2, "blocks, tiles a block")
    return _sfpu(call, blocks * per_block, 0, 16)


def _unary_sfpu(call: KernelCall) -> Bound:
    """ttnn's unary ``eltwise_sfpu.cpp``: runtime tiles, 0 -> 2."""
    (count,) = call.rt(1, "tiles")
    return _sfpu(call, count, 0, 2)


_UNARY_DATAFLOW = "ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/dataflow/"
LIBRARY: dict[str, LibraryKernel] = {
    f"{_UNARY_DATAFLOW}reader_unary_interleaved_start_id.cpp": LibraryKernel(Role.READER, _reader),
    f"{_UNARY_DATAFLOW}writer_unary_interleaved_start_id.cpp": LibraryKernel(Role.WRITER, _writer),
    "tt_metal/kernels/compute/eltwise_sfpu.cpp": LibraryKernel(Role.COMPUTE, _eltwise_sfpu),
    "ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/compute/eltwise_sfpu.cpp": LibraryKernel(
        Role.COMPUTE, _unary_sfpu
    ),
}
"""tt-metal's kernels meshnn runs, by their path in tt-metal's tree."""


def library_kernel(source: str) -> LibraryKernel | None:
    """The library's kernel for a source path (relative to tt-metal's tree, or a path ending in one), or None."""
    path = source.strip()
    while path.startswith("./"):
        path = path[2:]
    if path in LIBRARY:
        return LIBRARY[path]
    for known, kernel in LIBRARY.items():  # an absolute path into a tt-metal checkout
        if path.endswith("/" + known):
            return kernel
    return None
