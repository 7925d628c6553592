"""A program descriptor checked as tt-metal checks it when it builds the program, then bound to
meshnn's kernel library core by core: the :class:`Plan` ``ttnn.generic_op`` runs.

What is checked (tt-metal's rules): a circular buffer's index is below the arch's count of
circular buffers, its pages divide its total size, its face geometry is a tile's, an index is
used once on a core, a buffer-backed one's offset is L1-aligned and fits the bank; kernels lie on
the compute grid, and a core runs at most one kernel per data-movement processor and one compute
kernel.  What meshnn cannot run is
refused by name (``NotImplementedByMeshnn``): a kernel given as source code, a kernel path not in
the library, a circular buffer in a tensor's L1 or a global circular buffer.  Nothing is written
before every check of every program has passed.

Layer: ops.  Imports errors, device, mesh and the generic op's modules.
"""

from __future__ import annotations

from dataclasses import dataclass

from meshnn.device.core import CoreCoord
from meshnn.errors import MeshnnValueError
from meshnn.mesh.mesh_device import MeshDevice
from meshnn.ops.generic.cb_desc import FACE_HEIGHT, L1_ALIGNMENT, NUM_CIRCULAR_BUFFERS, CBDescriptor, bank_size
from meshnn.ops.generic.enums import SourceType
from meshnn.ops.generic.kernel_desc import ComputeConfigDescriptor, KernelDescriptor
from meshnn.ops.generic.library import KernelCall, library_kernel
from meshnn.ops.generic.machine import Bound, CBLayout, CircularBuffer, Memory, check_balance, not_run
from meshnn.ops.generic.program_desc import ProgramDescriptor

OP = "ttnn.generic_op"


@dataclass(frozen=True)
class Plan:
    """A program bound on every core it uses: each core's circular buffers and kernels (in feed-forward order)."""

    cores: tuple[tuple[CoreCoord, tuple[CBLayout, ...], tuple[Bound, ...]], ...]


def _check_cb(i: int, cb: CBDescriptor, count: int) -> None:
    where = f"{OP}: cbs[{i}]"
    if cb.global_circular_buffer is not None:
        raise not_run(f"{where}: a circular buffer of a global circular buffer")
    for fmt in [*cb.format_descriptors, *cb.remote_format_descriptors]:
        if fmt.buffer_index >= count:
            raise MeshnnValueError(
                f"{where}: buffer index {fmt.buffer_index} exceeds the circular buffers a core has ({count})"
            )
        face = fmt.face_geometry
        if face is not None and not (0 < face.face_r_dim <= FACE_HEIGHT and face.num_faces > 0):
            raise MeshnnValueError(
                f"{where}: face_geometry needs 0 < face_r_dim <= {FACE_HEIGHT} and num_faces > 0, got "
                f"({face.face_r_dim}, {face.num_faces})"
            )
        if fmt.page_size == 0 or cb.total_size % fmt.page_size:
            raise MeshnnValueError(
                f"{where}: total_size {cb.total_size} B must be divisible by page_size {fmt.page_size} B"
            )
    if cb.buffer is not None:
        if cb.address_offset % L1_ALIGNMENT:
            raise MeshnnValueError(f"{where}: address_offset {cb.address_offset} must be a multiple of {L1_ALIGNMENT}")
        if cb.address_offset + cb.total_size > bank_size(cb.buffer):
            raise MeshnnValueError(
                f"{where}: address_offset {cb.address_offset} + total_size {cb.total_size} exceeds the buffer's "
                f"bank ({bank_size(cb.buffer)} B)"
            )


def _cb_layouts(program: ProgramDescriptor, mesh: MeshDevice) -> dict[CoreCoord, dict[int, CBLayout]]:
    """Every core's circular buffers by index, each descriptor checked."""
    count = NUM_CIRCULAR_BUFFERS.get(mesh.arch(), 32)
    cores: dict[CoreCoord, dict[int, CBLayout]] = {}
    for i, cb in enumerate(program.cbs):
        _check_cb(i, cb, count)
        for core in cb.core_ranges.cores():
            held = cores.setdefault(core, {})
            for fmt in cb.format_descriptors:
                if fmt.buffer_index in held:
                    raise MeshnnValueError(
                        f"{OP}: cbs[{i}]: circular buffer index {fmt.buffer_index} is already in use on core {core}"
                    )
                tile = (fmt.tile.height, fmt.tile.width) if fmt.tile is not None else (32, 32)
                held[fmt.buffer_index] = CBLayout(fmt.buffer_index, fmt.page_size, fmt.data_format, tile)
    return cores


def _slot(kernel: KernelDescriptor) -> str:
    if isinstance(kernel.config, ComputeConfigDescriptor):
        return "compute"
    return f"data-movement processor {kernel.config.processor.name}"


def _check_kernels(program: ProgramDescriptor, mesh: MeshDevice) -> None:
    """Known sources, cores on the grid, one kernel per processor of a core."""
    grid = mesh.compute_with_storage_grid_size()
    taken: dict[tuple[CoreCoord, str], int] = {}
    for i, kernel in enumerate(program.kernels):
        where = f"{OP}: kernels[{i}]"
        if kernel.source_type is SourceType.SOURCE_CODE:
            raise not_run(
                f"{where}: a kernel given as source code ({kernel.kernel_source.strip()[:60]!r}...; meshnn runs only "
                "the kernels of its library, tt-metal's own by path)"
            )
        if library_kernel(kernel.kernel_source) is None:
            raise not_run(f"{where}: the kernel {kernel.kernel_source} (not in meshnn's kernel library)")
        for core in kernel.core_ranges.cores():
            if core.x >= grid.x or core.y >= grid.y:
                raise MeshnnValueError(f"{where}: core {core} is outside the {grid.x}x{grid.y} compute grid")
            slot = (core, _slot(kernel))
            if slot in taken:
                raise MeshnnValueError(f"{where}: core {core} already runs kernels[{taken[slot]}] on its {slot[1]}")
            taken[slot] = i


def check_program(program: ProgramDescriptor, mesh: MeshDevice) -> None:
    """Every rule of the module's text but the binding's own."""
    _check_kernels(program, mesh)
    _cb_layouts(program, mesh)


def bind_program(program: ProgramDescriptor, mesh: MeshDevice, memory: Memory) -> Plan:
    """The program bound core by core (its arguments checked, its buffers found): nothing runs yet."""
    check_program(program, mesh)
    layouts = _cb_layouts(program, mesh)
    buffered = [i for i, cb in enumerate(program.cbs) if cb.buffer is not None]
    if buffered:
        raise not_run(f"{OP}: cbs[{buffered[0]}]: a circular buffer in a tensor's L1 (its buffer set)")
    per_core: dict[CoreCoord, list[Bound]] = {}
    for kernel in program.kernels:
        entry = library_kernel(kernel.kernel_source)
        defines = dict(kernel.defines)
        for core in kernel.core_ranges.cores():
            call = KernelCall(
                kernel.kernel_source.strip(),
                core,
                tuple(kernel.compile_time_args),
                tuple(kernel.runtime_args_of(core)),
                defines,
                layouts.get(core, {}),
                memory,
            )
            per_core.setdefault(core, []).append(entry.bind(call))  # type: ignore[union-attr]
    cores = []
    for core, kernels in per_core.items():
        check_balance(core, kernels)
        ordered = tuple(sorted(kernels, key=lambda k: k.role))
        cores.append((core, tuple(layouts.get(core, {}).values()), ordered))
    return Plan(tuple(cores))


def run_plan(plan: Plan, memory: Memory) -> None:
    """Each core's kernels in feed-forward order over fresh circular buffers."""
    for _, cbs, kernels in plan.cores:
        queues = {cb.index: CircularBuffer(cb.index, cb.page_size, cb.dtype, cb.tile) for cb in cbs}
        for kernel in kernels:
            kernel.run(queues, memory)
