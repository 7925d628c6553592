"""Calibration from a measured profile: an ops-perf CSV in tt-metal's format (written here from a
run, its kernel durations changed as hardware would have measured them) is read, checked row by row
and per family, and a run on another batch or system is predicted with the measured times where its
ops match and the model elsewhere."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

import meshnn as ttnn
from meshnn.perf import OpFamily, ops_perf_csv
from meshnn.perf.calibrate import calibrate_run, check_rows, desc_of, family_errors, measured_machine, measured_times
from meshnn.perf.calibrate_table import format_calibrated, format_checks
from meshnn.perf.measured import read_ops_perf_csv
from meshnn.perf.model import predict_kernel
from meshnn.perf.op_codes import family_of

SLOWER = {"MatmulDeviceOperation": 1.25, "AllGatherAsyncDeviceOperation": 0.8}
"""How the 'hardware' differs from the model in these tests: matmuls 25% slower, gathers 20% faster."""


def run_block(mesh, rows=32):
    put = dict(layout=ttnn.TILE_LAYOUT, device=mesh)
    x = ttnn.from_torch(np.ones((rows, 512), np.float32), dtype=ttnn.bfloat16, **put)
    w = ttnn.from_torch(
        np.ones((512, 1024), np.float32), dtype=ttnn.bfloat8_b, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1), **put
    )
    y = ttnn.silu(ttnn.linear(x, w))
    return ttnn.all_gather(y, dim=1)


def measured_csv(recorder) -> str:
    """The recorder's ops-perf CSV with each kernel duration as the 'hardware' measured it."""
    rows = list(csv.reader(io.StringIO(ops_perf_csv(recorder))))
    header, body = rows[0], rows[1:]
    code, kernel = header.index("OP CODE"), header.index("DEVICE KERNEL DURATION [ns]")
    for row in body:
        row[kernel] = str(round(float(row[kernel]) * SLOWER.get(row[code], 1.0)))
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *body])
    return out.getvalue()


@pytest.fixture(scope="module")
def measured():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="n300", execute=False)
    try:
        with ttnn.perf_capture() as capture:
            run_block(mesh)
        return measured_csv(capture.recorders[0]), capture.recorders[0]
    finally:
        mesh.close()


def test_the_rows_are_read_with_their_tensors_and_devices(measured):
    text, recorder = measured
    rows = read_ops_perf_csv(text)
    assert len(rows) == 2 * len(recorder.records)  # one row per device per op
    matmul = rows[0]
    assert matmul.op_code == "MatmulDeviceOperation" and matmul.device == 0 and matmul.op_id == 1
    assert [t.shape for t in matmul.inputs] == [(1, 1, 32, 512), (1, 1, 512, 512)]
    assert matmul.inputs[1].dtype == "BFLOAT8_B" and matmul.fidelity == "HiFi2"
    assert measured_machine(rows).system.name == "n300"


def test_each_row_and_family_carries_the_models_error(measured):
    text, _ = measured
    rows = read_ops_perf_csv(text)
    checks = check_rows(rows, measured_machine(rows))
    errors = {c.row.op_code: c.error for c in checks}
    assert errors["MatmulDeviceOperation"] == pytest.approx(1 / 1.25 - 1, abs=1e-3)
    assert errors["AllGatherAsyncDeviceOperation"] == pytest.approx(1 / 0.8 - 1, abs=1e-3)
    assert errors["UnaryDeviceOperation"] == pytest.approx(0, abs=1e-3)
    families = {f.family: f for f in family_errors(checks)}
    assert families["MATMUL"].rows == 2 and families["MATMUL"].total_error == pytest.approx(-0.2, abs=1e-3)
    printed = format_checks(checks, measured_machine(rows))
    assert "the model's error per family" in printed and "-20%" in printed


def test_a_run_on_the_same_shapes_takes_every_measured_time(measured):
    text, recorder = measured
    ops = calibrate_run(recorder, measured_times(read_ops_perf_csv(text)))
    assert [o.source for o in ops] == ["measured"] * len(ops)
    matmul = ops[0]
    assert matmul.used_ns == pytest.approx(matmul.model_ns * 1.25, rel=1e-3)


def test_a_run_on_another_batch_mixes_measured_and_scaled_model_times(measured):
    text, _ = measured
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), system="n300", execute=False)
    try:
        with ttnn.perf_capture() as capture:
            run_block(mesh, rows=64)  # other shapes: nothing matches, each family scaled by its ratio
            run_block(mesh)  # the measured shapes again
        ops = calibrate_run(capture.recorders[0], measured_times(read_ops_perf_csv(text)))
    finally:
        mesh.close()
    sources = [o.source for o in ops]
    assert sources[:3] == ["model x 1.25", "model x 1.00", "model x 0.80"] and sources[3:] == ["measured"] * 3
    assert ops[0].used_ns == pytest.approx(ops[0].model_ns * 1.25, rel=1e-3)
    printed = format_calibrated(ops, capture.recorders[0].machine)
    assert "3 of 6 ops measured" in printed


TT_METAL = (
    "OP CODE,OP TYPE,GLOBAL CALL COUNT,DEVICE ID,ATTRIBUTES,MATH FIDELITY,CORE COUNT,PARALLELIZATION STRATEGY,"
    "HOST START TS,HOST END TS,HOST DURATION [ns],OP TO OP LATENCY [ns],DEVICE FW DURATION [ns],"
    "DEVICE KERNEL DURATION [ns],INPUT_0_W_PAD[LOGICAL],INPUT_0_Z_PAD[LOGICAL],INPUT_0_Y_PAD[LOGICAL],"
    "INPUT_0_X_PAD[LOGICAL],INPUT_0_LAYOUT,INPUT_0_DATATYPE,INPUT_0_MEMORY,OUTPUT_0_W_PAD[LOGICAL],"
    "OUTPUT_0_Z_PAD[LOGICAL],OUTPUT_0_Y_PAD[LOGICAL],OUTPUT_0_X_PAD[LOGICAL],OUTPUT_0_LAYOUT,OUTPUT_0_DATATYPE,"
    "OUTPUT_0_MEMORY,PM IDEAL [ns]\n"
    "Decode step,signpost,,,,,,,100,,,,,,,,,,,,,,,,,,,,\n"
    "BinaryDeviceOperation,tt_dnn_device,1024,0,{'binary_op_type': 'BinaryOpType::MUL'},HiFi4,16,,200,300,100,700,"
    "2600,2500,1[1],1[1],32[32],512[512],TILE,BFLOAT8_B,DEV_0_L1_WIDTH_SHARDED,1[1],1[1],32[32],512[512],TILE,"
    "BFLOAT8_B,DEV_0_L1_WIDTH_SHARDED,1\n"
    "Frobnicate,tt_dnn_device,2048,0,,,1,,400,500,100,800,3000,2900,1[1],1[1],32[1],32[1],TILE,BFLOAT16,"
    "DEV_0_DRAM_INTERLEAVED,,,,,,,,\n"
)


def test_a_profiler_csv_with_its_own_names_signposts_and_unknown_ops():
    """tt-metal's column order and extra columns, a signpost, an older op name, an op with no model."""
    rows = read_ops_perf_csv(TT_METAL)
    assert [r.op_code for r in rows] == ["BinaryDeviceOperation", "Frobnicate"]  # the signpost skipped
    assert rows[0].inputs[0].memory.name == "WIDTH_SHARDED" and rows[0].inputs[0].buffer.name == "L1"
    assert rows[0].kernel_ns == 2500 and rows[0].op_to_op_ns == 700 and rows[0].cores == 16
    assert family_of("BinaryDeviceOperation") is OpFamily.BINARY and desc_of(rows[1]) is None
    checks = check_rows(rows, measured_machine(rows, "n150"))
    assert checks[0].error is not None and checks[1].error is None and "no model" in checks[1].why


def test_a_legacy_csv_without_padded_dims_is_read():
    text = (
        "OP CODE,OP TYPE,GLOBAL CALL COUNT,DEVICE ID,ATTRIBUTES,INPUT_0_W,INPUT_0_Z,INPUT_0_Y,INPUT_0_X,"
        "INPUT_0_MEMORY,DEVICE KERNEL DURATION [ns]\n"
        "UnaryDeviceOperation,tt_dnn_device,1024,0,,1,1,64,64,DEV_0_DRAM_INTERLEAVED,4000\n"
    )
    (row,) = read_ops_perf_csv(text)
    assert row.inputs[0].shape == (1, 1, 64, 64) and row.kernel_ns == 4000


def test_a_file_that_is_not_an_ops_perf_csv_is_refused(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(ttnn.MeshnnValueError, match="OP CODE"):
        read_ops_perf_csv(bad)


SCRIPT = """
import numpy as np
import ttnn

mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
put = dict(layout=ttnn.TILE_LAYOUT, device=mesh)
for rows in (32, 64):
    x = ttnn.from_torch(np.ones((rows, 512), np.float32), dtype=ttnn.bfloat16, **put)
    w = ttnn.from_torch(np.ones((512, 1024), np.float32), dtype=ttnn.bfloat8_b,
                        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1), **put)
    ttnn.all_gather(ttnn.silu(ttnn.linear(x, w)), dim=1)
"""


def test_the_command_checks_the_rows_and_predicts_a_script_with_them(measured, tmp_path):
    from tests.cli.test_perf_command import meshnn

    text, _ = measured
    profile = tmp_path / "ops_perf_results_hw.csv"
    profile.write_text(text)
    script = tmp_path / "two_batches.py"
    script.write_text(SCRIPT)
    alone = meshnn("perf", "--calibrate", str(profile))
    assert alone.returncode == 0, alone.stderr
    assert "measured rows beside the model on n300" in alone.stdout and "6 of 6 rows timed" in alone.stdout
    run = meshnn(
        "perf", "--system", "n300", "--no-plot", "--calibrate", str(profile), "--out", str(tmp_path), str(script)
    )
    assert run.returncode == 0, run.stderr
    assert "3 of 6 ops measured" in run.stdout and "model x 1.25" in run.stdout
    bad = meshnn("perf", "--calibrate", str(tmp_path / "missing.csv"))
    assert bad.returncode == 2 and "--calibrate" in bad.stderr


def test_a_matmul_row_without_a_program_config_is_timed_on_ttnns_own_choice(measured):
    """The profiler's CORE COUNT of a matmul given no program config is the cores of the program ttnn
    picked, not a core grid the caller gave: the model picks the same program (here its 1-D in0
    multicast) and times the row as the run timed it."""
    text, recorder = measured
    row = read_ops_perf_csv(text)[0]
    desc = desc_of(row)
    assert row.op_code == "MatmulDeviceOperation" and row.cores and desc.core_grid is None
    assert predict_kernel(desc, measured_machine([row])).kernel_ns == pytest.approx(
        recorder.records[0].prediction.kernel_ns
    )


def test_tt_metal_2026_attention_op_codes_have_their_families():
    """A profile of tt-metal 2026 names the attention programs SDPAOperation / SdpaDecodeDeviceOperation
    (the older ScaledDotProductAttention / ...Decode): both are matched to the same families."""
    assert family_of("SdpaDecodeDeviceOperation") is OpFamily.SDPA_DECODE
    assert family_of("ScaledDotProductAttentionDecode") is OpFamily.SDPA_DECODE
    assert family_of("SDPAOperation") is OpFamily.SDPA
    assert family_of("ScaledDotProductAttention") is OpFamily.SDPA
