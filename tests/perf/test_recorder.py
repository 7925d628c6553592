"""The recorder, its table, the ops-perf CSV in tt-metal's format, and the time plot."""

from __future__ import annotations

import csv
import importlib.util
import io

import pytest

from meshnn.errors import MeshnnValueError
from meshnn.perf import (
    BufferType,
    CollectiveConfig,
    MatmulConfig,
    MatmulProgram,
    MemoryLayout,
    OpDesc,
    OpFamily,
    Recorder,
    TensorDesc,
    Topology,
    format_table,
    ops_perf_csv,
    write_ops_perf_csv,
    write_time_plot,
)


def decode_layer(recorder: Recorder, *, traced: bool = True) -> None:
    """A small decode step on T3000: a DRAM-sharded matmul, a prefill-size matmul, an add, a gather."""
    x = TensorDesc((1, 1, 32, 8192), buffer=BufferType.L1, memory=MemoryLayout.WIDTH_SHARDED)
    w = TensorDesc((1, 1, 8192, 1280), "BFLOAT8_B", memory=MemoryLayout.WIDTH_SHARDED)
    y = TensorDesc((1, 1, 32, 1280), buffer=BufferType.L1, memory=MemoryLayout.WIDTH_SHARDED)
    dram_sharded = MatmulConfig(MatmulProgram.DRAM_SHARDED)
    recorder.record(OpDesc(OpFamily.MATMUL, (x, w), (y,), matmul=dram_sharded), traced=traced)  # LoFi: ttnn's default
    a = TensorDesc((1, 1, 4096, 4096), "BFLOAT8_B", buffer=BufferType.L1, memory=MemoryLayout.BLOCK_SHARDED)
    b = TensorDesc((1, 1, 4096, 4096), "BFLOAT8_B")
    big = MatmulConfig(MatmulProgram.MULTICAST_2D, (8, 8))
    recorder.record(OpDesc(OpFamily.MATMUL, (a, b), (a,), fidelity="HiFi2", matmul=big), traced=traced)
    z = TensorDesc((1, 1, 32, 1280))
    recorder.record(OpDesc(OpFamily.BINARY, (z, z), (z,)), traced=traced)
    gathered = TensorDesc((1, 1, 32, 1280 * 8))
    ring = CollectiveConfig(Topology.RING, dim=3)
    recorder.record(OpDesc(OpFamily.ALL_GATHER, (z,), (gathered,), collective=ring), traced=traced)


def test_records_and_totals_per_device():
    recorder = Recorder("t3k")
    decode_layer(recorder)
    assert len(recorder) == 4
    totals = recorder.totals()
    assert [t.device for t in totals] == list(range(8))
    assert all(t.ops == 4 for t in totals)
    kernels = sum(r.prediction.kernel_ns for r in recorder.records)
    assert totals[0].kernel_ns == pytest.approx(kernels)
    assert recorder.total_ns() == pytest.approx(totals[0].total_ns)
    recorder.clear()
    assert len(recorder) == 0 and recorder.total_ns() == 0


def test_subsets_of_devices_and_collectives_wait_for_peers():
    recorder = Recorder("t3k")
    x = TensorDesc((1, 1, 2048, 2048))
    recorder.record(OpDesc(OpFamily.UNARY, (x,), (x,)), devices=[0], traced=True)
    gathered = OpDesc(OpFamily.ALL_GATHER, (x,), (x,), collective=CollectiveConfig(cluster_axis=1))
    entry = recorder.record(gathered, devices=[0, 1, 2, 3], traced=True)
    assert len(set(entry.start_ns)) == 1  # devices 1-3 wait for device 0
    assert entry.start_ns[0] > recorder.records[0].prediction.kernel_ns
    with pytest.raises(MeshnnValueError, match="device ids"):
        recorder.record(gathered, devices=[8])


def test_table_lists_every_op_and_the_totals():
    recorder = Recorder("t3k")
    decode_layer(recorder)
    text = format_table(recorder)
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["#", "op", "shapes"]
    assert "MatmulDeviceOperation" in lines[2] and "BF16 x BFP8 => BF16" in lines[2] and "DRAM" in lines[2]
    assert "AllGatherAsyncDeviceOperation" in text and "link" in text
    assert sum(line.startswith("device ") for line in lines) == 8
    assert "t3k" in text


def read_csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_csv_is_one_row_per_device_per_op_in_tt_metal_format():
    recorder = Recorder("t3k")
    decode_layer(recorder)
    rows = read_csv(ops_perf_csv(recorder))
    assert len(rows) == 4 * 8
    first = rows[0]
    assert first["OP CODE"] == "MatmulDeviceOperation" and first["OP TYPE"] == "tt_dnn_device"
    assert first["DEVICE ARCH"] == "wormhole_b0" and first["MATH FIDELITY"] == "LoFi"
    assert [r["GLOBAL CALL COUNT"] for r in rows[:3]] == ["1024", "1025", "1026"]  # (op << 10) | device
    assert rows[8]["GLOBAL CALL COUNT"] == str(2 << 10)
    assert first["INPUT_1_DATATYPE"] == "BFLOAT8_B" and first["INPUT_1_MEMORY"] == "DEV_0_DRAM_WIDTH_SHARDED"
    assert first["INPUT_0_Y_PAD[LOGICAL]"] == "32[32]" and first["INPUT_0_X_PAD[LOGICAL]"] == "8192[8192]"
    assert "MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig" in first["ATTRIBUTES"]
    assert all("," not in value for row in rows for value in row.values())
    assert int(first["DEVICE KERNEL DURATION [ns]"]) == round(recorder.records[0].prediction.kernel_ns)
    for device in range(8):  # each device's rows in order of host start, as tt-perf-report sorts them
        starts = [int(r["HOST START TS"]) for r in rows if r["DEVICE ID"] == str(device)]
        assert starts == sorted(starts) and len(set(starts)) == len(starts)


def test_csv_file_and_blackhole_arch(tmp_path):
    recorder = Recorder("p150")
    x = TensorDesc((1, 1, 64, 64))
    recorder.record(OpDesc(OpFamily.SOFTMAX, (x,), (x,)))
    path = write_ops_perf_csv(recorder, tmp_path / "ops_perf_results_meshnn.csv")
    rows = read_csv(path.read_text())
    assert rows[0]["DEVICE ARCH"] == "blackhole" and rows[0]["AVAILABLE WORKER CORE COUNT"] == "110"


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="matplotlib (the plot extra) is absent")
def test_time_plot_is_a_png(tmp_path):
    recorder = Recorder("t3k")
    decode_layer(recorder)
    path = write_time_plot(recorder, tmp_path / "time.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
