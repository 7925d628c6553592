"""ttnn.generic_op and its program descriptors: fields and defaults as ttnn's binding has them,
the eltwise program of tt-metal's own kernels (reader, SFPU compute, writer) bit for bit equal to
ttnn's unary ops, the mesh form, and every refusal made before anything is written."""

from __future__ import annotations

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.errors import MeshnnTypeError, MeshnnValueError, NotImplementedByMeshnn
from meshnn.ops.costs import ESTIMATED
from meshnn.perf import OpFamily

DATAFLOW = "ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/dataflow/"
READER = DATAFLOW + "reader_unary_interleaved_start_id.cpp"
WRITER = DATAFLOW + "writer_unary_interleaved_start_id.cpp"
SFPU = "tt_metal/kernels/compute/eltwise_sfpu.cpp"


def grid(x0, y0, x1, y1):
    return ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(x0, y0), ttnn.CoreCoord(x1, y1))])


def put(mesh, values, dtype=ttnn.bfloat16):
    return ttnn.from_torch(values, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh)


def empty_like(mesh, x):
    return ttnn.allocate_tensor_on_device(x.spec, mesh)


def eltwise_program(x, out, num_tiles, chain, *, dtype=ttnn.bfloat16, page=2048):
    """The program of tt-metal's test_generic_op: tiles split over an 8x8 grid, one block of
    ``work`` tiles per core (tiles 0.. to the first core, and on)."""
    (_, cores, group1, group2, work, _) = ttnn.split_work_to_cores(grid(0, 0, 7, 7), num_tiles)
    assert len(group2.ranges()) == 0
    cbs = [
        ttnn.CBDescriptor(
            total_size=2 * page,
            core_ranges=cores,
            format_descriptors=[ttnn.CBFormatDescriptor(buffer_index=i, data_format=dtype, page_size=page)],
        )
        for i in (0, 16)
    ]
    reads, writes, tile = ttnn.RuntimeArgs(), ttnn.RuntimeArgs(), 0
    for core in group1.cores():
        reads[core.x][core.y] = [x.buffer_address(), work, tile]
        writes[core.x][core.y] = [out.buffer_address(), work, tile]
        tile += work
    kernels = [
        ttnn.KernelDescriptor(
            kernel_source=READER,
            core_ranges=cores,
            compile_time_args=ttnn.TensorAccessorArgs(x).get_compile_time_args(),
            runtime_args=reads,
            config=ttnn.ReaderConfigDescriptor(),
        ),
        ttnn.KernelDescriptor(
            kernel_source=WRITER,
            core_ranges=cores,
            compile_time_args=[16, *ttnn.TensorAccessorArgs(out).get_compile_time_args()],
            runtime_args=writes,
            config=ttnn.WriterConfigDescriptor(),
        ),
        ttnn.KernelDescriptor(
            kernel_source=SFPU,
            core_ranges=cores,
            compile_time_args=[work, 1],
            defines=[("SFPU_OP_CHAIN_0", chain)] if chain is not None else [],
            config=ttnn.ComputeConfigDescriptor(),
        ),
    ]
    return ttnn.ProgramDescriptor(kernels=kernels, semaphores=[], cbs=cbs)


def _int_of(t):
    import torch

    return {ttnn.bfloat16: torch.int16, ttnn.float32: torch.int32}[t.dtype]


def _bits(t):
    return ttnn.to_torch(t).view(-1).view(dtype=_int_of(t)).numpy()


@pytest.fixture
def mesh(open_mesh):
    return open_mesh((1, 1))


# --------------------------------------------------------------------------- descriptors


def test_descriptor_defaults_are_ttnns():
    tile = ttnn.TileDescriptor()
    assert (tile.height, tile.width, tile.transpose) == (32, 32, False)
    assert ttnn.TileDescriptor(16, 32) == ttnn.TileDescriptor(ttnn.Tile((16, 32)))
    assert ttnn.TileDescriptor(ttnn.TileDescriptor(8, 32, True)).transpose is True
    fmt = ttnn.CBFormatDescriptor()
    assert (fmt.buffer_index, fmt.data_format, fmt.page_size, fmt.tile) == (0, ttnn.float32, 0, None)
    fmt = ttnn.CBFormatDescriptor(1, ttnn.bfloat16, 64)
    assert fmt.data_format_as_uint8 == 5 and ttnn.CBFormatDescriptor(0, ttnn.bfloat8_b, 1088).data_format_as_uint8 == 6
    cb = ttnn.CBDescriptor()
    assert (cb.total_size, cb.format_descriptors, cb.address_offset, cb.has_buffer()) == (0, [], 0, False)
    compute = ttnn.ComputeConfigDescriptor()
    assert compute.math_fidelity == ttnn.MathFidelity.HiFi4 and compute.unpack_to_dest_mode == []
    assert not (compute.math_approx_mode or compute.fp32_dest_acc_en or compute.dst_full_sync_en)
    dm = ttnn.DataMovementConfigDescriptor()
    assert (dm.processor, dm.noc, dm.noc_mode) == (
        ttnn.DataMovementProcessor.RISCV_0,
        ttnn.NOC.RISCV_0_default,
        ttnn.NOC_MODE.DM_DEDICATED_NOC,
    )
    kernel = ttnn.KernelDescriptor()
    assert kernel.source_type is ttnn.KernelDescriptor.SourceType.FILE_PATH and len(kernel.runtime_args) == 0
    assert isinstance(kernel.config, ttnn.ReaderConfigDescriptor) and kernel.opt_level is None
    program = ttnn.ProgramDescriptor()
    assert (program.kernels, program.semaphores, program.cbs, program.custom_program_hash) == ([], [], [], None)
    sem = ttnn.SemaphoreDescriptor(id=3, core_ranges=grid(0, 0, 1, 1), initial_value=0)
    assert sem.id == 3 and sem.core_type is ttnn.CoreType.WORKER
    with pytest.raises(AttributeError):
        sem.id = 4  # read-only, as in ttnn
    assert int(ttnn.NOC_MODE.DM_DYNAMIC_NOC) == 1 and int(ttnn.DataMovementProcessor.RISCV_1) == 1


def test_descriptor_fields_refuse_wrong_values():
    with pytest.raises(MeshnnTypeError, match="data_format"):
        ttnn.CBFormatDescriptor(0, "bfloat16", 64)
    with pytest.raises(MeshnnValueError, match="buffer_index"):
        ttnn.CBFormatDescriptor(256, ttnn.bfloat16, 64)
    with pytest.raises(MeshnnTypeError, match="core_ranges"):
        ttnn.CBDescriptor(total_size=64, core_ranges=[], format_descriptors=[])
    with pytest.raises(MeshnnTypeError, match="config"):
        ttnn.KernelDescriptor(kernel_source=READER, core_ranges=grid(0, 0, 0, 0))
    with pytest.raises(MeshnnTypeError, match="takes no arguments"):
        ttnn.ReaderConfigDescriptor(1)
    cb = ttnn.CBDescriptor(64, grid(0, 0, 0, 0), [])
    with pytest.raises(MeshnnTypeError, match="format_descriptors"):
        cb.format_descriptors = [1]
    assert cb.format_descriptors == []  # unchanged


def test_runtime_args_index_by_core_and_change_in_place():
    args = ttnn.RuntimeArgs()
    args[0][1] = [1, 2]
    args[0][1] = [3]  # replaces
    args[2][0] = [4]
    args[0][1].append(5)
    assert [(c.x, c.y, list(a)) for c, a in args] == [(0, 1, [3, 5]), (2, 0, [4])]
    with pytest.raises(MeshnnValueError, match=r"CoreCoord\(1, 1\)"):
        args[1][1]
    with pytest.raises(MeshnnValueError, match="unsigned 32-bit"):
        args[0][1].append(-1)
    kernel = ttnn.KernelDescriptor(kernel_source=READER, core_ranges=grid(0, 0, 2, 1), runtime_args=args,
                                   config=ttnn.ReaderConfigDescriptor())  # fmt: skip
    program = ttnn.ProgramDescriptor(kernels=[kernel])
    program.kernels[0].runtime_args[0][1].extend([6, 7])  # a model appends fabric args this way
    assert kernel.runtime_args_of(ttnn.CoreCoord(0, 1)) == [3, 5, 6, 7]
    assert list(args[0][1]) == [3, 5]  # the kernel holds its own copy
    nine = [(ttnn.CoreCoord(0, 0), [9])]
    other = ttnn.KernelDescriptor(
        kernel_source=WRITER, core_ranges=grid(0, 0, 0, 0), runtime_args=nine, config=ttnn.WriterConfigDescriptor()
    )
    fresh = ttnn.KernelDescriptor(
        kernel_source=WRITER, core_ranges=grid(0, 0, 1, 0), config=ttnn.WriterConfigDescriptor()
    )
    fresh.append_runtime_args_from(other)
    assert [list(a) for _, a in fresh.runtime_args] == [[9], [0]]


def test_merge_and_mesh_program_descriptors():
    def on(cores):
        kernel = ttnn.KernelDescriptor(kernel_source=READER, core_ranges=cores, config=ttnn.ReaderConfigDescriptor())
        return ttnn.ProgramDescriptor(kernels=[kernel])

    merged = ttnn.merge_program_descriptors([on(grid(0, 0, 1, 1)), on(grid(2, 0, 3, 1))])
    assert len(merged.kernels) == 2 and merged.custom_program_hash is None
    with pytest.raises(MeshnnValueError, match="descriptors 0 and 1"):
        ttnn.merge_program_descriptors([on(grid(0, 0, 1, 1)), on(grid(1, 1, 2, 2))])
    assert len(ttnn.merge_program_descriptors([]).kernels) == 0
    box = ttnn.MeshCoordinateRange(ttnn.MeshCoordinate(0, 0), ttnn.MeshCoordinate(0, 0))
    program = on(grid(0, 0, 0, 0))
    mesh_program = ttnn.MeshProgramDescriptor({box: program})
    assert box in mesh_program and mesh_program[box] is program and list(mesh_program) == [(box, program)]


def test_cb_descriptor_from_sharded_tensor(mesh):
    cores = grid(0, 0, 1, 0)
    config = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1,
                               ttnn.ShardSpec(cores, (64, 32), ttnn.ShardOrientation.ROW_MAJOR))  # fmt: skip
    x = ttnn.from_torch(np.zeros((128, 32), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                        device=mesh, memory_config=config)  # fmt: skip
    cb = ttnn.cb_descriptor_from_sharded_tensor(3, x)
    assert cb.total_size == 2 * 2048 and cb.core_ranges == cores and cb.has_buffer()
    (fmt,) = cb.format_descriptors
    assert (fmt.buffer_index, fmt.data_format, fmt.page_size, fmt.tile) == (
        3,
        ttnn.bfloat16,
        2048,
        ttnn.TileDescriptor(),
    )
    placed = ttnn.cb_descriptor_from_sharded_tensor(0, x, address_offset=2048, total_size=2048)
    assert ttnn.get_cb_address(placed) == x.buffer_address() + 2048 == placed.buffer_address() + 2048
    with pytest.raises(MeshnnValueError, match="exceeds"):
        ttnn.cb_descriptor_from_sharded_tensor(0, x, address_offset=2048, total_size=4096)
    with pytest.raises(MeshnnValueError, match="sharded"):
        ttnn.cb_descriptor_from_sharded_tensor(0, put(mesh, np.zeros((32, 32), np.float32)))


# --------------------------------------------------------------------------- running programs

CHAINS = [
    ("exp_tile_init(); exp_tile(0);", ttnn.exp),
    ("relu_tile_init(); relu_tile(0);", ttnn.relu),
    ("relu_max_tile_init(); relu_max_tile(0, 0x3f800000u);", lambda x: ttnn.relu_max(x, upper_limit=1.0)),
    ("gelu_tile_init<1u>(); gelu_tile<1u>(0);", lambda x: ttnn.gelu(x, fast_and_approximate_mode=True)),
    ("SFPU_OP_CHAIN_0_INIT_0 SFPU_OP_CHAIN_0_FUNC_0", ttnn.sqrt),
]


@pytest.mark.parametrize("num_tiles", [1, 12, 64])
@pytest.mark.parametrize("chain, op", CHAINS, ids=["exp", "relu", "relu_max", "gelu", "nested"])
def test_the_eltwise_program_equals_ttnns_unary_op(mesh, rng, num_tiles, chain, op):
    x = put(mesh, rng.standard_normal((1, num_tiles, 32, 32)).astype(np.float32) * 2)
    out = empty_like(mesh, x)
    program = eltwise_program(x, out, num_tiles, chain)
    if chain.startswith("SFPU_OP_CHAIN_0_INIT"):
        program.kernels[2].defines = [*program.kernels[2].defines, ("SFPU_OP_CHAIN_0_INIT_0", "sqrt_tile_init();"),
                                      ("SFPU_OP_CHAIN_0_FUNC_0", "sqrt_tile<false>(0);")]  # fmt: skip
    assert ttnn.generic_op([x, out], program) is out
    assert np.array_equal(_bits(out), _bits(op(x)))


def test_float32_tiles_and_no_chain_copies(mesh, rng):
    x = put(mesh, rng.standard_normal((2, 32, 64)).astype(np.float32), ttnn.float32)
    out = empty_like(mesh, x)
    ttnn.generic_op([x, out], eltwise_program(x, out, 4, "exp_tile(0);", dtype=ttnn.float32, page=4096))
    assert np.array_equal(_bits(out), _bits(ttnn.exp(x)))
    copy = empty_like(mesh, x)
    ttnn.generic_op([x, copy], eltwise_program(x, copy, 4, None, dtype=ttnn.float32, page=4096))
    assert np.array_equal(_bits(copy), _bits(x))


def test_a_mesh_program_runs_on_its_box_only(open_mesh, rng):
    mesh = open_mesh((1, 2))
    values = rng.standard_normal((1, 2, 32, 32)).astype(np.float32)
    x = ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1))  # fmt: skip
    out = ttnn.allocate_tensor_on_device(x.spec, mesh)
    zeros = [_bits(t).copy() for t in ttnn.get_device_tensors(out)]
    box = ttnn.MeshCoordinateRange(ttnn.MeshCoordinate(0, 1), ttnn.MeshCoordinate(0, 1))
    ttnn.generic_op([x, out], ttnn.MeshProgramDescriptor({box: eltwise_program(x, out, 1, "exp_tile(0);")}))
    first, second = ttnn.get_device_tensors(out)
    assert np.array_equal(_bits(first), zeros[0])  # device (0, 0) ran nothing
    expected = ttnn.get_device_tensors(ttnn.exp(x))[1]
    assert np.array_equal(_bits(second), _bits(expected))


def _refused(mesh, rng, change, error, match):
    x = put(mesh, rng.standard_normal((1, 4, 32, 32)).astype(np.float32))
    out = empty_like(mesh, x)
    before = _bits(out).copy()
    program = eltwise_program(x, out, 4, "exp_tile(0);")
    call = change(program, x, out) or (lambda: ttnn.generic_op([x, out], program))
    with pytest.raises(error, match=match):
        call()
    assert np.array_equal(_bits(out), before)  # nothing written


def test_an_unknown_kernel_is_refused_by_name_before_anything_is_written(mesh, rng):
    def unknown(program, x, out):
        program.kernels[1].kernel_source = "ttnn/cpp/my_op/writer_mine.cpp"

    _refused(mesh, rng, unknown, NotImplementedByMeshnn, "writer_mine.cpp")

    def source(program, x, out):
        program.kernels[0].source_type = ttnn.KernelDescriptor.SourceType.SOURCE_CODE
        program.kernels[0].kernel_source = "void kernel_main() {}"

    _refused(mesh, rng, source, NotImplementedByMeshnn, "source code")

    def sfpu(program, x, out):
        program.kernels[2].defines = [("SFPU_OP_CHAIN_0", "frobnicate_tile(0);")]

    _refused(mesh, rng, sfpu, NotImplementedByMeshnn, "frobnicate_tile")


@pytest.mark.parametrize(
    "what, match",
    [
        ("address", "no io tensor's buffer"),
        ("pages", "page 4 is outside"),
        ("cb_size", "divisible by page_size"),
        ("cb_index", "exceeds the circular buffers"),
        ("grid", "outside the"),
        ("two_readers", "already runs"),
        ("hang", "would hang"),
        ("tile_page", "tile is 2048 B"),
        ("face", "face_geometry"),
    ],
)
def test_bad_programs_are_refused_before_anything_is_written(mesh, rng, what, match):
    def change(program, x, out):
        reader, writer, compute = program.kernels
        if what == "address":
            reader.runtime_args[0][0][0] = out.buffer_address() + 4096
        elif what == "pages":
            reader.runtime_args[0][0][2] = 4
        elif what == "cb_size":
            program.cbs[0].total_size = 3000
        elif what == "cb_index":
            program.cbs[0].format_descriptors[0].buffer_index = 40
        elif what == "grid":
            reader.core_ranges = grid(0, 0, 0, 12)
        elif what == "two_readers":
            program.kernels = [reader, writer, compute, reader]
        elif what == "hang":
            compute.compile_time_args = [2, 1]
        elif what == "tile_page":
            program.cbs[0].format_descriptors[0].page_size = 1024
        elif what == "face":
            program.cbs[0].format_descriptors[0].face_geometry = ttnn.FaceGeometry(32, 4)

    _refused(mesh, rng, change, MeshnnValueError, match)


def test_generic_op_arguments(mesh, rng):
    x = put(mesh, rng.standard_normal((32, 32)).astype(np.float32))
    with pytest.raises(MeshnnValueError, match="at least one input"):
        ttnn.generic_op([x], ttnn.ProgramDescriptor())
    with pytest.raises(MeshnnTypeError, match="program_descriptor"):
        ttnn.generic_op([x, x], [])
    box = ttnn.MeshCoordinateRange(ttnn.MeshCoordinate(0, 0), ttnn.MeshCoordinate(0, 0))
    twice = ttnn.MeshProgramDescriptor()
    twice[box] = ttnn.ProgramDescriptor()
    twice[box] = ttnn.ProgramDescriptor()
    with pytest.raises(MeshnnValueError, match="duplicate"):
        ttnn.generic_op([x, x], twice)
    assert ttnn.generic_op([x, x], ttnn.ProgramDescriptor()) is x  # no kernels: nothing to run


def test_perf_capture_times_generic_op(mesh, rng):
    x = put(mesh, rng.standard_normal((1, 8, 32, 32)).astype(np.float32))
    out = empty_like(mesh, x)
    program = eltwise_program(x, out, 8, "exp_tile(0);")
    with ttnn.perf_capture() as capture:
        ttnn.generic_op([x, out], program)
    (record,) = capture.recorder(mesh).records
    assert record.desc.op_code == "GenericOpDeviceOperation" and record.prediction.kernel_ns > 0
    assert record.desc.family is OpFamily.UNARY and ESTIMATED not in record.desc.attributes


def test_program_hash_is_the_structure_and_keys_the_program_cache(mesh, rng):
    x = put(mesh, rng.standard_normal((1, 2, 32, 32)).astype(np.float32))
    out = empty_like(mesh, x)
    exp, relu = (eltwise_program(x, out, 2, chain) for chain in ("exp_tile(0);", "relu_tile(0);"))
    moved = eltwise_program(x, out, 2, "exp_tile(0);")
    moved.kernels[0].runtime_args[0][0][0] = 12345  # a runtime value: not part of the structure
    assert ttnn.compute_program_descriptor_hash(exp) == ttnn.compute_program_descriptor_hash(moved)
    assert ttnn.compute_program_descriptor_hash(exp) != ttnn.compute_program_descriptor_hash(relu)
    exp.custom_program_hash = 7
    assert ttnn.compute_program_descriptor_hash(exp) == 7
    before = mesh.num_program_cache_entries()
    ttnn.generic_op([x, out], relu)
    ttnn.generic_op([x, out], relu)
    ttnn.generic_op([x, out], eltwise_program(x, out, 2, "exp_tile(0);"))
    assert mesh.num_program_cache_entries() == before + 2


def test_ttnns_own_unary_compute_kernel_runs_from_cb_0_to_2(mesh, rng):
    x = put(mesh, rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
    out = empty_like(mesh, x)
    program = eltwise_program(x, out, 3, "SFPU_OP_CHAIN_0_FUNC_0")
    compute = program.kernels[2]
    compute.kernel_source = "ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/compute/eltwise_sfpu.cpp"
    compute.defines = [*compute.defines, ("SFPU_OP_CHAIN_0_FUNC_0", "log_tile<1u>(0);")]
    compute.runtime_args = [(core, [1]) for core in compute.core_ranges.cores()]
    program.cbs[1].format_descriptors[0].buffer_index = 2
    program.kernels[1].compile_time_args = [2, *program.kernels[1].compile_time_args[1:]]
    ttnn.generic_op([x, out], program)
    assert np.array_equal(_bits(out), _bits(ttnn.log(x)))
