"""The flash-decode program of 2025-02 (meshnn.perf.flash_decode): its merges one after another, its calls'
set-up a chunk, and a recorded step re-timed with it.  Speed is not asserted: the structure is."""

from __future__ import annotations

import dataclasses

import pytest

from meshnn.perf import AttentionConfig, OpDesc, OpFamily, TensorDesc, predict
from meshnn.perf.flash_decode import (
    CALLS_PER_CHUNK,
    CALLS_PER_MERGE,
    FINAL_CALLS,
    FIRST_CHUNK_SAVED_CALLS,
    PROGRAM_ATTRIBUTE,
    SERIAL_MERGE,
    DecodeProgram,
    marked,
    program_of,
    with_program,
)
from meshnn.perf.recorder import Recorder


def decode_desc(kv_heads: int = 1, position: int = 65536, cap: int = 16, chunk: int = 256) -> OpDesc:
    q = TensorDesc((1, 1, 32, 128), logical_shape=(1, 1, 4 * kv_heads, 128))
    cache = TensorDesc((1, kv_heads, 128 * 1024, 128), "BFLOAT8_B")
    config = AttentionConfig(32, chunk, True, position, cap)
    return OpDesc(OpFamily.SDPA_DECODE, (q, cache, cache), (q,), fidelity="HiFi2", core_grid=(8, 8), attention=config)


def test_marking_round_trips_and_leaves_other_ops():
    desc = decode_desc()
    assert program_of(desc) is None
    serial = marked(desc, DecodeProgram.SERIAL_MERGE)
    assert program_of(serial) is DecodeProgram.SERIAL_MERGE
    assert dict(serial.attributes)[PROGRAM_ATTRIBUTE] == "2025-02"
    assert marked(serial, DecodeProgram.SERIAL_MERGE) == serial  # marked once
    other = OpDesc(OpFamily.BINARY, (TensorDesc((32, 32)),), (TensorDesc((32, 32)),))
    assert marked(other, DecodeProgram.SERIAL_MERGE) is other


def test_serial_merges_grow_with_the_cores_of_a_head():
    """At 64K one kv head's chunks are split over up to the cap's cores; each core beyond the first adds a
    merge of 13 calls to the old program, so more cores cost more there and nothing today."""

    def run(cap: int, program: DecodeProgram | None):
        desc = decode_desc(cap=cap)
        return predict(desc if program is None else marked(desc, program), "n150", traced=True)

    serial16, serial64 = run(16, DecodeProgram.SERIAL_MERGE), run(64, DecodeProgram.SERIAL_MERGE)
    calls_ns = CALLS_PER_MERGE * SERIAL_MERGE.call_cycles  # Wormhole: 1 cycle a ns
    more = serial64.fixed_ns - serial16.fixed_ns  # 48 more merges: their calls and the partials' tiles
    assert 48 * calls_ns < more < 48 * (calls_ns + 1500)
    assert serial64.compute_ns < serial16.compute_ns  # 5 chunks a core, not 17
    assert run(16, None).kernel_ns < serial16.kernel_ns
    notes = predict(marked(decode_desc(cap=16), DecodeProgram.SERIAL_MERGE), "n150").notes
    assert any("15 merge(s)" in n for n in notes)


def test_one_chunk_pays_its_calls_and_no_merge():
    """A 128-token prompt's cache is one chunk on one core: the old program adds that chunk's calls only."""
    desc = decode_desc(kv_heads=8, position=228)
    today = predict(desc, "n150", traced=True)
    serial = predict(marked(desc, DecodeProgram.SERIAL_MERGE), "n150", traced=True)
    assert serial.fixed_ns == pytest.approx(today.fixed_ns)
    calls = CALLS_PER_CHUNK - FIRST_CHUNK_SAVED_CALLS + FINAL_CALLS  # a first chunk, then the reducer's last calls
    assert serial.compute_ns - today.compute_ns == pytest.approx(calls * SERIAL_MERGE.call_cycles)


def test_a_recorded_step_retimed_with_the_program():
    recorder = Recorder("t3k", (1, 8))
    recorder.record(decode_desc())
    recorder.record(OpDesc(OpFamily.BINARY, (TensorDesc((32, 32)),), (TensorDesc((32, 32)),)))
    again = with_program(recorder, DecodeProgram.SERIAL_MERGE, traced=True)
    assert [program_of(r.desc) for r in again.records] == [DecodeProgram.SERIAL_MERGE, None]
    assert again.records[0].prediction.kernel_ns > recorder.records[0].prediction.kernel_ns > 0
    assert again.records[1].prediction.kernel_ns == recorder.records[1].prediction.kernel_ns
    assert [program_of(r.desc) for r in recorder.records] == [None, None]  # the capture is left as it was


def test_the_fitted_figure_has_its_source():
    assert all(SERIAL_MERGE.sources.get(f.name) for f in dataclasses.fields(SERIAL_MERGE) if f.name != "sources")
    with pytest.raises(ValueError):
        program_of(dataclasses.replace(decode_desc(), attributes=((PROGRAM_ATTRIBUTE, "1999-01"),)))
