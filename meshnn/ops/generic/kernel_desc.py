"""A program's kernels: their configs (``ttnn.ReaderConfigDescriptor``,
``ttnn.WriterConfigDescriptor``, ``ttnn.DataMovementConfigDescriptor``,
``ttnn.ComputeConfigDescriptor``) and ``ttnn.KernelDescriptor`` with ttnn's constructor keywords
and defaults.  A reader runs on RISCV_1 over NOC 1, a writer on RISCV_0 over NOC 0 (tt-metal's
reader and writer data-movement configs).

Layer: ops.  Imports errors, device and perf (``MathFidelity``).
"""

from __future__ import annotations

import os
from typing import Any

from meshnn.device.core import CoreRangeSet
from meshnn.device.dram_workers import NOC
from meshnn.errors import MeshnnTypeError
from meshnn.ops.generic import fields as f
from meshnn.ops.generic.enums import NOC_MODE, DataMovementProcessor, KernelBuildOptLevel, SourceType, UnpackToDestMode
from meshnn.ops.generic.runtime_args import Entries, RuntimeArgs, RuntimeArgsView, entries_of
from meshnn.perf.fidelity import MathFidelity


class ReaderConfigDescriptor:
    """``ttnn.ReaderConfigDescriptor()``: a reader data-movement kernel (RISCV_1, NOC 1)."""

    processor, noc, noc_mode = DataMovementProcessor.RISCV_1, NOC.RISCV_1_default, NOC_MODE.DM_DEDICATED_NOC

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        f.no_arguments("ttnn.ReaderConfigDescriptor", args, kwargs)


class WriterConfigDescriptor:
    """``ttnn.WriterConfigDescriptor()``: a writer data-movement kernel (RISCV_0, NOC 0)."""

    processor, noc, noc_mode = DataMovementProcessor.RISCV_0, NOC.RISCV_0_default, NOC_MODE.DM_DEDICATED_NOC

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        f.no_arguments("ttnn.WriterConfigDescriptor", args, kwargs)


class DataMovementConfigDescriptor:
    """``ttnn.DataMovementConfigDescriptor(processor=RISCV_0, noc=RISCV_0_default, noc_mode=DM_DEDICATED_NOC)``."""

    processor = f.Field(f.member(DataMovementProcessor))
    noc = f.Field(f.member(NOC))
    noc_mode = f.Field(f.member(NOC_MODE))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        params = {
            "processor": DataMovementProcessor.RISCV_0,
            "noc": NOC.RISCV_0_default,
            "noc_mode": NOC_MODE.DM_DEDICATED_NOC,
        }
        given = f.bind("ttnn.DataMovementConfigDescriptor", params, args, kwargs)
        self.processor, self.noc, self.noc_mode = given["processor"], given["noc"], given["noc_mode"]


class ComputeConfigDescriptor:
    """``ttnn.ComputeConfigDescriptor(math_fidelity=HiFi4, math_approx_mode=False,
    fp32_dest_acc_en=False, dst_full_sync_en=False, bfp8_pack_precise=False)``; its
    ``unpack_to_dest_mode`` (one ``UnpackToDestMode`` per circular buffer) starts empty."""

    math_fidelity = f.Field(f.member(MathFidelity))
    math_approx_mode = f.Field(f.boolean)
    fp32_dest_acc_en = f.Field(f.boolean)
    dst_full_sync_en = f.Field(f.boolean)
    bfp8_pack_precise = f.Field(f.boolean)
    unpack_to_dest_mode = f.Field(f.list_of(f.member(UnpackToDestMode)))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        params = {
            "math_fidelity": MathFidelity.HiFi4,
            "math_approx_mode": False,
            "fp32_dest_acc_en": False,
            "dst_full_sync_en": False,
            "bfp8_pack_precise": False,
        }
        given = f.bind("ttnn.ComputeConfigDescriptor", params, args, kwargs)
        for key, value in given.items():
            setattr(self, key, value)
        self.unpack_to_dest_mode = []


CONFIGS = (ReaderConfigDescriptor, WriterConfigDescriptor, DataMovementConfigDescriptor, ComputeConfigDescriptor)
Config = ReaderConfigDescriptor | WriterConfigDescriptor | DataMovementConfigDescriptor | ComputeConfigDescriptor


def _config(where: str, value: Any) -> Config:
    if not isinstance(value, CONFIGS):
        raise MeshnnTypeError(
            f"{where} must be a ttnn.ReaderConfigDescriptor, WriterConfigDescriptor, DataMovementConfigDescriptor "
            f"or ComputeConfigDescriptor, got {type(value).__name__}"
        )
    return value


def _path(where: str, value: Any) -> str:
    if not isinstance(value, str | os.PathLike):
        raise MeshnnTypeError(f"{where} must be a path, got {value!r}")
    return os.fspath(value)


_KERNEL_PARAMS = {
    "kernel_source": f.REQUIRED,
    "source_type": SourceType.FILE_PATH,
    "core_ranges": f.REQUIRED,
    "compile_time_args": list,
    "named_compile_time_args": list,
    "defines": list,
    "runtime_args": RuntimeArgs,
    "common_runtime_args": list,
    "opt_level": None,
    "config": f.REQUIRED,
    "compiler_include_paths": list,
}


class KernelDescriptor:
    """``ttnn.KernelDescriptor()`` or ``(kernel_source, source_type=FILE_PATH, core_ranges,
    compile_time_args=[], named_compile_time_args=[], defines=[], runtime_args=RuntimeArgs(),
    common_runtime_args=[], opt_level=None, config, compiler_include_paths=[])``: one kernel on the
    cores of ``core_ranges``, its source a path in tt-metal's tree or source code.  ``defines`` are
    ``(name, value)`` pairs; ``runtime_args`` reads as a ``[x][y]``-indexed view of its own pairs."""

    SourceType = SourceType

    kernel_source = f.Field(f.text)
    source_type = f.Field(f.member(SourceType))
    core_ranges = f.Field(f.core_ranges)
    compile_time_args = f.Field(f.u32_list)
    named_compile_time_args = f.Field(f.list_of(f.pair(f.text, f.uint(32))))
    defines = f.Field(f.list_of(f.pair(f.text, f.text)))
    common_runtime_args = f.Field(f.u32_list)
    opt_level = f.Field(f.optional(f.member(KernelBuildOptLevel)))
    config = f.Field(_config)
    compiler_include_paths = f.Field(f.list_of(_path))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not args and not kwargs:
            given = {k: ("" if k == "kernel_source" else None) for k in _KERNEL_PARAMS}
            given |= {k: v() for k, v in _KERNEL_PARAMS.items() if callable(v) and k != "source_type"}
            given |= {"source_type": SourceType.FILE_PATH, "core_ranges": CoreRangeSet()}
            given["config"] = ReaderConfigDescriptor()
        else:
            given = f.bind("ttnn.KernelDescriptor", _KERNEL_PARAMS, args, kwargs)
        for key, value in given.items():
            setattr(self, key, value)

    @property
    def runtime_args(self) -> RuntimeArgsView:
        return RuntimeArgsView(self._runtime_args)

    @runtime_args.setter
    def runtime_args(self, value: Any) -> None:
        self._runtime_args: Entries = entries_of("ttnn.KernelDescriptor.runtime_args", value)

    def clear_runtime_args(self) -> None:
        self._runtime_args.clear()

    def append_runtime_args_from(self, other: KernelDescriptor) -> None:
        """Each core's args extended by ``other``'s for that core, padded with zeros to the longest
        of ``other``'s (an empty kernel first takes the cores of its ``core_ranges``)."""
        other = _other("append_runtime_args_from", self, other)
        longest = max((len(a) for _, a in other._runtime_args), default=0)
        if longest == 0:
            return
        theirs = {core: args for core, args in reversed(other._runtime_args)}

        def padded(core: object) -> list[int]:
            extra = theirs.get(core, [])
            return [*extra, *[0] * (longest - len(extra))]

        if not self._runtime_args:
            self.runtime_args = [(core, padded(core)) for core in self.core_ranges.cores()]
            return
        for core, args in self._runtime_args:
            args.extend(padded(core))

    def extend_runtime_args_uniform(self, values: list[int]) -> None:
        """Every core's args extended by ``values``."""
        checked = f.u32_list("ttnn.KernelDescriptor.extend_runtime_args_uniform: values", values)
        for _, args in self._runtime_args:
            args.extend(checked)

    def append_common_runtime_args_from(self, other: KernelDescriptor) -> None:
        other = _other("append_common_runtime_args_from", self, other)
        self.common_runtime_args = [*self.common_runtime_args, *other.common_runtime_args]

    def runtime_args_of(self, core: object) -> list[int]:
        """The args of ``core`` (its last pair), or none."""
        for c, args in reversed(self._runtime_args):
            if c == core:
                return list(args)
        return []

    def __repr__(self) -> str:
        return f"KernelDescriptor({self.kernel_source!r}, {type(self.config).__name__}, {self.core_ranges})"


def _other(method: str, self: KernelDescriptor, other: object) -> KernelDescriptor:
    where = f"ttnn.KernelDescriptor.{method}"
    kernel = f.instance(KernelDescriptor)(f"{where}: other", other)
    if kernel is self:
        raise MeshnnTypeError(f"{where}: other is this kernel itself (cannot append a kernel's args from itself)")
    return kernel
