"""Bad calls of ``ttnn.generic_op`` and its program descriptors: wrong types and values of each
descriptor's fields, io tensors too few / freed / on another mesh, a kernel meshnn does not run,
a circular buffer whose pages do not divide it, and the helpers' bad arguments."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import DEAD, TYPE, VALUE, WRONG_MESH, Case

READER = "ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/dataflow/reader_unary_interleaved_start_id.cpp"


def _kernel(e, source=READER, **changes):
    kw = {"kernel_source": source, "core_ranges": e.grid, "config": ttnn.ReaderConfigDescriptor()} | changes
    return ttnn.KernelDescriptor(**kw)


def _far():
    return ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(0, 40))])


def _program(e, **kernel):
    return ttnn.ProgramDescriptor(kernels=[_kernel(e, **kernel)])


def _cb(e, total=4096, page=2048):
    fmt = ttnn.CBFormatDescriptor(0, ttnn.bfloat16, page)
    return ttnn.ProgramDescriptor(cbs=[ttnn.CBDescriptor(total, e.grid, [fmt])])


def _descriptor_rows() -> list[Case]:
    return [
        Case("TileDescriptor", "height is a string", lambda e: ttnn.TileDescriptor("32", 32), TYPE, "height"),
        Case("TileDescriptor", "width missing", lambda e: ttnn.TileDescriptor(32), TYPE, "width"),
        Case("FaceGeometry", "num_faces negative", lambda e: ttnn.FaceGeometry(16, -1), VALUE, "num_faces"),
        Case(
            "CBFormatDescriptor",
            "format a string",
            lambda e: ttnn.CBFormatDescriptor(0, "bf16", 64),
            TYPE,
            "data_format",
        ),
        Case(
            "CBFormatDescriptor",
            "index past 255",
            lambda e: ttnn.CBFormatDescriptor(256, ttnn.bfloat16, 64),
            VALUE,
            "buffer_index",
        ),
        Case("CBDescriptor", "core_ranges a list", lambda e: ttnn.CBDescriptor(64, [], []), TYPE, "core_ranges"),
        Case(
            "CBDescriptor",
            "formats not descriptors",
            lambda e: ttnn.CBDescriptor(64, e.grid, [0]),
            TYPE,
            "format_descriptors",
        ),
        Case(
            "SemaphoreDescriptor",
            "core_type a string",
            lambda e: ttnn.SemaphoreDescriptor(0, "WORKER", e.grid, 0),
            TYPE,
            "core_type",
        ),
        Case(
            "ReaderConfigDescriptor",
            "given an argument",
            lambda e: ttnn.ReaderConfigDescriptor(1),
            TYPE,
            "takes no arguments",
        ),
        Case(
            "WriterConfigDescriptor",
            "given a keyword",
            lambda e: ttnn.WriterConfigDescriptor(noc=0),
            TYPE,
            "takes no arguments",
        ),
        Case(
            "DataMovementConfigDescriptor",
            "processor 9",
            lambda e: ttnn.DataMovementConfigDescriptor(9),
            VALUE,
            "processor",
        ),
        Case(
            "ComputeConfigDescriptor",
            "fp32_dest_acc_en an int",
            lambda e: ttnn.ComputeConfigDescriptor(fp32_dest_acc_en=1),
            TYPE,
            "fp32_dest_acc_en",
        ),
        Case(
            "KernelDescriptor",
            "no config",
            lambda e: ttnn.KernelDescriptor(kernel_source=READER, core_ranges=e.grid),
            TYPE,
            "config",
        ),
        Case("KernelDescriptor", "defines not pairs", lambda e: _kernel(e, defines=["A=1"]), TYPE, "defines"),
        Case(
            "KernelDescriptor",
            "negative compile-time arg",
            lambda e: _kernel(e, compile_time_args=[-1]),
            VALUE,
            "compile_time_args",
        ),
        Case(
            "KernelDescriptor",
            "runtime args not by core",
            lambda e: _kernel(e, runtime_args=[[1, 2]]),
            TYPE,
            "runtime_args",
        ),
        Case(
            "ProgramDescriptor",
            "kernels not descriptors",
            lambda e: ttnn.ProgramDescriptor(kernels=[1]),
            TYPE,
            "kernels",
        ),
        Case(
            "MeshProgramDescriptor",
            "key not a range",
            lambda e: ttnn.MeshProgramDescriptor({0: ttnn.ProgramDescriptor()}),
            TYPE,
            "key",
        ),
        Case("RuntimeArgs", "given an argument", lambda e: ttnn.RuntimeArgs([1]), TYPE, "takes no arguments"),
        Case("RuntimeArgs", "x negative", lambda e: ttnn.RuntimeArgs()[-1], VALUE, "x"),
        Case(
            "RuntimeArgs",
            "args not uint32",
            lambda e: ttnn.RuntimeArgs().append(ttnn.CoreCoord(0, 0), [2**32]),
            VALUE,
            "values",
        ),
    ]


def _helper_rows() -> list[Case]:
    from_sharded = ttnn.cb_descriptor_from_sharded_tensor
    return [
        Case(
            "cb_descriptor_from_sharded_tensor", "interleaved tensor", lambda e: from_sharded(0, e.a), VALUE, "sharded"
        ),
        Case("cb_descriptor_from_sharded_tensor", "tensor freed", lambda e: from_sharded(0, e.freed), DEAD, "tensor"),
        Case(
            "cb_descriptor_from_sharded_tensor", "cb_index a string", lambda e: from_sharded("0", e.a), TYPE, "cb_index"
        ),
        Case("get_cb_address", "not a CBDescriptor", lambda e: ttnn.get_cb_address(0), TYPE, "descriptor"),
        Case(
            "compute_program_descriptor_hash",
            "not a program",
            lambda e: ttnn.compute_program_descriptor_hash(ttnn.KernelDescriptor()),
            TYPE,
            "program_descriptor",
        ),
        Case(
            "merge_program_descriptors",
            "not programs",
            lambda e: ttnn.merge_program_descriptors([1]),
            TYPE,
            "descriptors",
        ),
        Case(
            "merge_program_descriptors",
            "kernels share cores",
            lambda e: ttnn.merge_program_descriptors([_program(e), _program(e)]),
            VALUE,
            "descriptors 0 and 1",
        ),
    ]


def _op_rows() -> list[Case]:
    op = ttnn.generic_op
    return [
        Case("generic_op", "one io tensor", lambda e: op([e.a], ttnn.ProgramDescriptor()), VALUE, "io_tensors"),
        Case("generic_op", "io tensors a tensor", lambda e: op(e.a, ttnn.ProgramDescriptor()), TYPE, "io_tensors"),
        Case(
            "generic_op",
            "an io tensor freed",
            lambda e: op([e.a, e.freed], ttnn.ProgramDescriptor()),
            DEAD,
            r"io_tensors\[1\]",
        ),
        Case(
            "generic_op",
            "io tensors on two meshes",
            lambda e: op([e.a, e.other], ttnn.ProgramDescriptor()),
            WRONG_MESH,
            r"io_tensors\[1\]",
        ),
        Case("generic_op", "descriptor a list", lambda e: op([e.a, e.a2], []), TYPE, "program_descriptor"),
        Case(
            "generic_op",
            "a kernel off the compute grid",
            lambda e: op([e.a, e.a2], _program(e, core_ranges=_far())),
            VALUE,
            "outside the",
        ),
        Case(
            "generic_op",
            "pages do not divide the CB",
            lambda e: op([e.a, e.a2], _cb(e, total=3000)),
            VALUE,
            "page_size",
        ),
    ]


def rows() -> list[Case]:
    return [*_descriptor_rows(), *_helper_rows(), *_op_rows()]
