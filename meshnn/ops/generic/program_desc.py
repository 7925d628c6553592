"""Whole programs: ``ttnn.ProgramDescriptor`` (kernels, semaphores and circular buffers of one
device's program), ``ttnn.merge_program_descriptors`` (several programs on disjoint cores as one)
and ``ttnn.MeshProgramDescriptor`` (a program per box of mesh coordinates).

A descriptor's lists hold the descriptors given (not copies): ``program.kernels[1].runtime_args
[x][y].append(n)`` changes the program, as a model building one expects.

Layer: ops.  Imports errors, device and mesh.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.mesh.coord import MeshCoordinateRange
from meshnn.ops.generic import fields as f
from meshnn.ops.generic.cb_desc import CBDescriptor, SemaphoreDescriptor
from meshnn.ops.generic.kernel_desc import ComputeConfigDescriptor, KernelDescriptor


class ProgramDescriptor:
    """``ttnn.ProgramDescriptor(kernels=[], semaphores=[], cbs=[])``; ``custom_program_hash`` (None:
    the program's hash is its structure's) is a uint64."""

    kernels = f.Field(f.list_of(f.instance(KernelDescriptor)))
    semaphores = f.Field(f.list_of(f.instance(SemaphoreDescriptor)))
    cbs = f.Field(f.list_of(f.instance(CBDescriptor)))
    custom_program_hash = f.Field(f.optional(f.uint(64)))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        given = f.bind("ttnn.ProgramDescriptor", {"kernels": list, "semaphores": list, "cbs": list}, args, kwargs)
        self.kernels, self.semaphores, self.cbs = given["kernels"], given["semaphores"], given["cbs"]
        self.custom_program_hash = None

    def __repr__(self) -> str:
        return f"ProgramDescriptor({len(self.kernels)} kernels, {len(self.semaphores)} semaphores, {len(self.cbs)} cbs)"


def _cores(program: ProgramDescriptor) -> set:
    return {core for kernel in program.kernels for core in kernel.core_ranges.cores()}


def merge_program_descriptors(descriptors: list[ProgramDescriptor]) -> ProgramDescriptor:
    """``ttnn.merge_program_descriptors``: one program holding every kernel, semaphore and circular
    buffer of ``descriptors`` in order; kernels of different descriptors must not share a core."""
    programs = f.list_of(f.instance(ProgramDescriptor))("ttnn.merge_program_descriptors: descriptors", descriptors)
    cores = [_cores(p) for p in programs]
    for i in range(len(programs)):
        for j in range(i + 1, len(programs)):
            if cores[i] & cores[j]:
                raise MeshnnValueError(
                    f"ttnn.merge_program_descriptors: descriptors {i} and {j} have kernels on the same cores "
                    f"({sorted(cores[i] & cores[j], key=lambda c: (c.y, c.x))[:4]}...): each must use its own cores"
                )
    merged = ProgramDescriptor(
        [k for p in programs for k in p.kernels],
        [s for p in programs for s in p.semaphores],
        [c for p in programs for c in p.cbs],
    )
    if len(programs) == 1:
        merged.custom_program_hash = programs[0].custom_program_hash
    return merged


class MeshProgramDescriptor:
    """``ttnn.MeshProgramDescriptor()`` or ``(mesh_programs)`` from a dict
    ``{MeshCoordinateRange: ProgramDescriptor}``: ``(range, program)`` pairs; ``desc[range] =
    program`` adds a pair (a repeated range is refused when the program runs, as in ttnn)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        given = f.bind("ttnn.MeshProgramDescriptor", {"mesh_programs": dict}, args, kwargs)
        programs = given["mesh_programs"]
        if not isinstance(programs, dict):
            raise MeshnnTypeError(f"ttnn.MeshProgramDescriptor: mesh_programs must be a dict, got {programs!r}")
        self._pairs: list[tuple[MeshCoordinateRange, ProgramDescriptor]] = []
        for key, value in programs.items():
            self[key] = value

    def __setitem__(self, key: MeshCoordinateRange, value: ProgramDescriptor) -> None:
        key = f.instance(MeshCoordinateRange)("ttnn.MeshProgramDescriptor: key", key)
        self._pairs.append((key, f.instance(ProgramDescriptor)("ttnn.MeshProgramDescriptor: value", value)))

    def __getitem__(self, key: MeshCoordinateRange) -> ProgramDescriptor:
        key = f.instance(MeshCoordinateRange)("ttnn.MeshProgramDescriptor: key", key)
        for k, v in self._pairs:
            if k == key:
                return v
        raise MeshnnValueError(f"MeshCoordinateRange {key} not found in MeshProgramDescriptor")

    def __contains__(self, key: object) -> bool:
        return any(k == key for k, _ in self._pairs)

    def __iter__(self) -> Iterator[tuple[MeshCoordinateRange, ProgramDescriptor]]:
        return iter(list(self._pairs))

    def __len__(self) -> int:
        return len(self._pairs)


def _ranges(cores: Any) -> tuple:
    return tuple((r.start.x, r.start.y, r.end.x, r.end.y) for r in cores.ranges())


def _config_key(config: Any) -> tuple:
    if isinstance(config, ComputeConfigDescriptor):
        fields = (config.math_fidelity.value, config.fp32_dest_acc_en, config.dst_full_sync_en)
        fields += (tuple(int(m) for m in config.unpack_to_dest_mode), config.bfp8_pack_precise, config.math_approx_mode)
        return (type(config).__name__, *fields)
    return (type(config).__name__, int(config.processor), int(config.noc), int(config.noc_mode))


def _kernel_key(kernel: KernelDescriptor) -> tuple:
    return (
        kernel.kernel_source,
        int(kernel.source_type),
        _ranges(kernel.core_ranges),
        tuple(kernel.compile_time_args),
        tuple(kernel.named_compile_time_args),
        tuple(kernel.defines),
        len(kernel.common_runtime_args),
        len(kernel.runtime_args),
        _config_key(kernel.config),
    )


def _cb_key(cb: CBDescriptor) -> tuple:
    def formats(descriptors: list) -> tuple:
        return tuple(
            (
                f.buffer_index,
                f.data_format_as_uint8,
                f.page_size,
                f.tile and (f.tile.height, f.tile.width, f.tile.transpose),
            )
            for f in descriptors
        )

    remote = formats(cb.remote_format_descriptors)
    pinned = (cb.buffer is not None, cb.global_circular_buffer is not None)
    return (cb.total_size, _ranges(cb.core_ranges), formats(cb.format_descriptors), remote, *pinned)


def compute_program_descriptor_hash(program_descriptor: ProgramDescriptor) -> int:
    """``ttnn.compute_program_descriptor_hash``: a uint64 of a program's structure (kernel sources,
    core ranges, compile-time args, defines, counts of runtime args, configs, circular buffers and
    semaphores; not runtime argument values or buffer addresses), or its ``custom_program_hash``.
    The same structure hashes the same in every process (meshnn's own figure, not ttnn's)."""
    where = "ttnn.compute_program_descriptor_hash: program_descriptor"
    program = f.instance(ProgramDescriptor)(where, program_descriptor)
    if program.custom_program_hash is not None:
        return program.custom_program_hash
    key = (
        tuple(_kernel_key(k) for k in program.kernels),
        tuple(_cb_key(c) for c in program.cbs),
        tuple((_ranges(s.core_ranges), int(s.core_type), s.initial_value) for s in program.semaphores),
    )
    return int.from_bytes(hashlib.blake2b(repr(key).encode(), digest_size=8).digest(), "little")
