"""tt-metal's CI figures for single collectives, beside the CCL report's (:mod:`tests.perf.published_ccl`).

None of these set a constant of the model (:mod:`meshnn.perf.fabric` is fitted to the CCL report's
rows alone): every figure here is a check.  Sources, all in the tt-metal tree of 2026-06:

- MDP = tests/ttnn/multidevice_perf_tests/: ``test_all_gather_minimal_perf.py`` (the DiT all_gather on a
  T3000: 2200-2500 us, average DEVICE KERNEL time of tests/nightly/t3000/ccl/test_minimal_all_gather_async.py's
  ``dit_shape``), ``test_all_to_all_dispatch_perf.py`` and ``test_all_to_all_combine_perf.py`` (min-max
  ranges of the largest DEVICE KERNEL time, shapes in tests/nightly/t3000/ccl/ and tests/nightly/tg/ccl/);
- PREFILL = tests/ttnn/unit_tests/operations/ccl/test_llama_prefill_ccl_ops_perf_nightly_TG.py: 6U Galaxy ring
  all_gather and reduce_scatter of the 70B's prefill (shapes: test_ag_rs_llama_prefill_TG.py), a CI
  **ceiling** (``measured < target``, marked "TODO: update when all work on ccls is done");
- TG = models/demos/llama3_70b_galaxy/tests/tg_perf_unit_tests/test_ccl_async_perf_TG_llama.py and _qwen.py:
  the 70B's and Qwen3-32B's decode collectives on a 6U Galaxy, ceilings (``measured < target + 0.4``; shapes:
  tests/ttnn/unit_tests/operations/ccl/test_ccl_async_TG_llama.py, test_llama_reduce_scatter_async_6U.py);
- DECODER = models/demos/llama3_70b_galaxy/tests/decoder_perf_targets_6u.json and qwen_decoder_perf_targets_6u.json:
  the same decode collectives measured inside the decoder (``kernel_duration``, margin 5%), which the
  ceilings above bound from far above.

A ceiling is not a measurement: :func:`ceilings` lists them apart (name, source, target, model), and
tests/perf/test_ccl_ci.py checks that the model is not above any (within 15%); :func:`figures` holds
the measured figures and ranges, which ``tests.perf.published`` counts.  The 6U Galaxy's rings
(``FABRIC_1D_RING`` on its 8x4 mesh, rings of 4 along axis 1 and of 8 along axis 0; "Needs 6U ring"
in PREFILL) are not in meshnn's ``galaxy`` (the 4U cluster descriptor, no wraparound): :data:`GALAXY_6U`
adds them (tests only).  test_ccl_perf.py of tests/ttnn/unit_tests/operations/ccl/blackhole_CI/box/
nightly (a P150x4 all_gather, 330 us) is not used: CI skips it (issue #29658: "building with the wrong
version") and meshnn has no P150x4 system.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import cache

from meshnn.perf import (
    BufferType,
    CollectiveConfig,
    Layout,
    MemoryLayout,
    OpDesc,
    OpFamily,
    TensorDesc,
    Topology,
    machine,
    predict,
)
from meshnn.perf.a2a_combine import CombineLoad, combine_attributes
from meshnn.perf.sparse_a2a import Routing, routing_attributes
from meshnn.perf.systems import Machine

from .a2a_routing import combine_scenario, scenario_routing
from .figure import Figure

MDP = "tt-metal tests/ttnn/multidevice_perf_tests/{}"
PREFILL = "tt-metal tests/ttnn/unit_tests/operations/ccl/test_llama_prefill_ccl_ops_perf_nightly_TG.py (6U Galaxy)"
TG = "tt-metal models/demos/llama3_70b_galaxy/tests/tg_perf_unit_tests/test_ccl_async_perf_TG_{}.py (6U Galaxy)"
DECODER = "tt-metal models/demos/llama3_70b_galaxy/tests/{}decoder_perf_targets_6u.json, decoder (6U Galaxy)"
TAIL = "tt-metal models/demos/llama3_70b_galaxy/tests/{}decoder_perf_targets_6u.json, model_tail (6U Galaxy)"
LM_HEAD, LM_HEAD_QWEN = (1, 1, 32, 16384), (1, 1, 32, 19456)
"""The LM head's output a device (its all_reduce along axis 1: lm_head.py; unit-test shapes lm_head_llama and
lm_head_qwen of test_ccl_async_TG_llama.py, bfloat8_b)."""
AG, RS, AR = OpFamily.ALL_GATHER, OpFamily.REDUCE_SCATTER, OpFamily.ALL_REDUCE
DISPATCH, COMBINE = OpFamily.ALL_TO_ALL_DISPATCH, OpFamily.ALL_TO_ALL_COMBINE
L, R = Topology.LINEAR, Topology.RING
BF16, BFP8 = "BFLOAT16", "BFLOAT8_B"
L1, DRAM = BufferType.L1, BufferType.DRAM

_GALAXY = machine("galaxy").system
GALAXY_6U = replace(
    _GALAXY,
    ring_lengths=frozenset({4, 8}),
    source=_GALAXY.source + "; 6U: its rows and columns close (FABRIC_1D_RING on the 8x4 mesh in the 6U CI tests)",
)
"""A 6U Galaxy: meshnn's ``galaxy`` with wraparound links closing rings of 4 and 8 (tests only)."""


def _tensor(shape, dtype=BF16, buffer=DRAM, sharded=False, row_major=False) -> TensorDesc:
    memory = MemoryLayout.WIDTH_SHARDED if sharded else MemoryLayout.INTERLEAVED
    layout = Layout.ROW_MAJOR if row_major else Layout.TILE
    return TensorDesc(shape, dtype, layout, buffer, memory)


def _us(family, inputs, outputs, m: Machine, config: CollectiveConfig, attributes=(), op_code="", name="") -> float:
    desc = OpDesc(family, inputs, outputs, op_code=op_code, name=name, collective=config, attributes=attributes)
    return predict(desc, m, traced=True).kernel_ns / 1e3


def _gather(m, devices, topology, links, axis, out_shape, dtype=BF16, buffer=DRAM, sharded=False) -> float:
    """An ``experimental.all_gather_async`` whose per-device output is ``out_shape`` (gathered on its last
    dim, or dim 2 when the last one does not split)."""
    whole = _tensor(out_shape, dtype, buffer, sharded)
    *lead, h, w = out_shape
    part_shape = (*lead, h, w // devices) if w % (32 * devices) == 0 else (*lead, h // devices, w)
    part = _tensor(part_shape, dtype, buffer, sharded)
    config = CollectiveConfig(topology, cluster_axis=axis, num_links=links)
    return _us(AG, (part,), (whole,), m, config, name="ttnn.experimental.all_gather_async")


def _scatter(m, devices, topology, links, axis, in_shape, dtype=BF16, buffer=DRAM, sharded=False, op_code="") -> float:
    """A reduce_scatter of the per-device input ``in_shape`` on its last dim (``op_code``: its program)."""
    whole = _tensor(in_shape, dtype, buffer, sharded)
    part = _tensor((*in_shape[:-1], in_shape[-1] // devices), dtype, buffer, sharded)
    config = CollectiveConfig(topology, cluster_axis=axis, num_links=links)
    return _us(RS, (whole,), (part,), m, config, op_code=op_code)


def _all_reduce(m, axis, shape, dtype, links, *, buffered: bool) -> float:
    """ttnn.experimental.all_reduce_async of ``shape`` in L1 on a ring; ``buffered``: the Llama form
    (its own buffer tensor), whose program multicasts each device's whole tensor."""
    x = _tensor(shape, dtype, L1, sharded=True)
    attributes = (("multicast", "True"),) if buffered else ()
    return _us(AR, (x,), (x,), m, CollectiveConfig(R, cluster_axis=axis, num_links=links), attributes)


def _exchange(family, m, links, topology, tokens, hidden, k, experts_per_device, devices, routing=None) -> float:
    """all_to_all_dispatch (``tokens`` of ``hidden`` bfloat16 values a device, each to its top-``k``
    experts' devices) or all_to_all_combine (the expert outputs back), row-major in DRAM, on axis 1;
    ``routing``: the pages its program sends (:mod:`meshnn.perf.sparse_a2a`), None: not known."""
    config = CollectiveConfig(topology, cluster_axis=1, num_links=links, peers=k)
    if family is DISPATCH:
        inputs = (_tensor((tokens, 1, 1, hidden), row_major=True),)
        outputs = (_tensor((tokens * devices, 1, 1, hidden), row_major=True),)
    else:
        inputs = (_tensor((experts_per_device, tokens * devices, 1, hidden), row_major=True),)
        outputs = (_tensor((k, tokens, 1, hidden), row_major=True),)
    if isinstance(routing, CombineLoad):  # local_reduce: one page a token and device, the experts summed
        inputs = (_tensor((1, tokens * devices, 1, hidden), row_major=True),)
        attributes = combine_attributes(routing)
    else:
        attributes = () if routing is None else routing_attributes(routing)
    return _us(family, inputs, outputs, m, config, attributes)


@cache
def _dispatch_routing(system: str, tokens: int) -> Routing:
    """The routing of the dispatch perf test on ``system`` (tokens a device): the T3000's
    (tests/nightly/t3000/ccl/test_all_to_all_dispatch.py, test_decode_perf / test_prefill_perf: a 2x4
    mesh, 8 experts a device of the axis (32), ``worst_perf``, 1 link, a line) or the 6U's
    (tests/nightly/tg/ccl/test_all_to_all_dispatch_6U.py: 8x4, 256 experts, ``random``, 4 links, a ring),
    k 8, along axis 1, over the test's iterations (40 decode; prefill: 1 of the 6U's 3, the rows alike
    at 4096 tokens)."""
    decode = tokens <= 32
    if system == "T3K":
        return scenario_routing(DISPATCH, (2, 4), tokens, 32, 8, 1, ring=False, scheme="worst_perf")
    return scenario_routing(
        DISPATCH, (8, 4), tokens, 256, 8, 4, ring=True, scheme="random", iterations=40 if decode else 1
    )


@cache
def _combine_load(system: str, tokens: int) -> CombineLoad:
    """The sender cores of the combine perf test on ``system`` (``tokens``: the figure's, the group's batch at
    decode), as at the targets' date (tt-metal cf2ed83aff, 2025-08-07: tests/ttnn/unit_tests/operations/ccl/
    test_all_to_all_combine_t3000.py and _6U.py, test_perf): 8 tokens a device of the axis (batch 32) and seq 1
    or 128, 8 experts a device of the axis (32), ``random`` over every device of the mesh (gen_tensors'
    ``devices`` is the whole mesh: 4 a device on the T3000's 2x4, 1 on the 6U's 8x4), k 8, ``local_reduce``; the
    T3000 on 1 link, the 6U on 4; over the test's iterations (40 at decode; prefill: one draw)."""
    decode = tokens <= 32
    per_device = 8 if decode else 8 * 128
    mesh, links = ((2, 4), 1) if system == "T3K" else ((8, 4), 4)
    return combine_scenario(mesh, per_device, 32, 8, links, iterations=40 if decode else 1)


def _t3k(mesh=(1, 8)) -> Machine:
    return machine("t3k", mesh)


def _g6() -> Machine:
    return Machine(GALAXY_6U, (8, 4))


_PREFILL_RS = {128: (48, 25, 50), 4096: (490, 280, 750), 8192: (950, 540, 1485)}
"""PREFILL's reduce_scatter ceilings (us) by sequence length, for widths 2048 (ring of 8), 1280 and 3584
(rings of 4), all bfloat8_b on 4 links."""
_PREFILL_AG = {128: (26, 20, 30, 16), 4096: (490, 285, 770, 35), 8192: (960, 550, 1485, 65)}
"""PREFILL's all_gather ceilings (us): per-device widths 256 (ring of 8), 320, 896 (bfloat8_b) and 32
(bfloat16) gathered over rings of 4, on 4 links."""
_RS_WIDTHS = ((2048, 0, 8), (1280, 1, 4), (3584, 1, 4))
_AG_WIDTHS = ((256, 0, 8, BFP8), (320, 1, 4, BFP8), (896, 1, 4, BFP8), (32, 1, 4, BF16))


Ceiling = tuple[str, str, float, Callable[[], float]]
"""(name, source, the CI's target in us, the model's us)."""


def _prefill_ceilings() -> list[Ceiling]:
    out: list[Ceiling] = []
    for seq, targets in _PREFILL_RS.items():
        for (width, axis, n), us in zip(_RS_WIDTHS, targets, strict=True):

            def rs(seq=seq, width=width, axis=axis, n=n) -> float:
                return _scatter(_g6(), n, R, 4, axis, (1, 1, seq, width), BFP8)

            out.append((f"6U reduce_scatter ring of {n}, {seq}x{width} bfloat8_b, 4 links", PREFILL, us, rs))
    for seq, targets in _PREFILL_AG.items():
        for (width, axis, n, dtype), us in zip(_AG_WIDTHS, targets, strict=True):

            def ag(seq=seq, width=width, axis=axis, n=n, dtype=dtype) -> float:
                return _gather(_g6(), n, R, 4, axis, (1, 1, seq, width * n), dtype)

            name = f"6U all_gather ring of {n}, {seq}x{width}/device {dtype.lower()}, 4 links"
            out.append((name, PREFILL, us, ag))
    return out


def _a2a_figures() -> list[Figure]:
    rows = (  # family, system, stage, tokens a device, (low, high) us
        (DISPATCH, "T3K", "decode", 8, (32, 38)),
        (DISPATCH, "T3K", "prefill", 8 * 128, (3800, 4300)),
        (DISPATCH, "6U", "decode", 32, (12, 17)),
        (DISPATCH, "6U", "prefill", 32 * 128, (700, 800)),
        (COMBINE, "T3K", "decode", 8, (92, 105)),
        (COMBINE, "T3K", "prefill", 8 * 128, (9800, 10700)),
        (COMBINE, "6U", "decode", 32, (27, 36)),
        (COMBINE, "6U", "prefill", 32 * 128, (1300, 1370)),
    )
    out = []
    for family, system, stage, tokens, (low, high) in rows:

        def model(f=family, s=system, t=tokens) -> float:
            routing = _dispatch_routing(s, t) if f is DISPATCH else _combine_load(s, t)
            if s == "T3K":  # 2x4, FABRIC_1D, 1 link
                return _exchange(f, _t3k((2, 4)), 1, L, t, 7168, 8, 8, 4, routing)
            return _exchange(f, _g6(), 4, R, t, 7168, 8, 8, 4, routing)  # 8x4, FABRIC_1D_RING, 4 links

        op = "dispatch" if family is DISPATCH else "combine"
        src = MDP.format(f"test_all_to_all_{op}_perf.py ({system} {stage})")
        name = f"{system} all_to_all_{op} {stage}, {tokens} tokens x 7168 a device, k 8, 4 devices"
        why = A2A_MISSES.get((family, system, stage), "")
        out.append(Figure(name, src, low, high, "us", model, not why, why, group="collectives"))
    return out


A2A_MISSES: dict[tuple[OpFamily, str, str], str] = {}
"""all_to_all rows outside the claim, each with why."""


def _ag_binary_mult() -> float:  # 4 devices (axis 1), 4 links, 30 cores of width-sharded bfloat8_b in L1
    return _gather(_g6(), 4, R, 4, 1, (1, 1, 32, 3840), BFP8, L1, sharded=True)


def _llama_rs() -> float:  # LlamaReduceScatter: 24 cores of 32x160 bfloat8_b, over 4 devices
    return _scatter(_g6(), 4, R, 4, 1, (1, 1, 32, 3840), BFP8, L1, True, "LlamaReduceScatterDeviceOperation")


def _ar(shape, dtype, axis=0) -> Callable[[], float]:
    return lambda: _all_reduce(_g6(), axis, shape, dtype, 4, buffered=True)


def _rs_create_heads() -> float:  # the QKV reduce_scatter: 20 cores of 32x64 bfloat16, over 4 devices
    code = "LlamaReduceScatterCreateHeadsDeviceOperation"
    return _scatter(_g6(), 4, R, 4, 1, (1, 1, 32, 1280), BF16, L1, True, code)


_FF2_LLAMA, _FF2_QWEN = _ar((1, 1, 32, 2048), BFP8), _ar((1, 1, 32, 1280), BF16)


def _decode_ceilings() -> list[Ceiling]:
    return [
        ("6U all_gather binary_mult 32x3840 bfloat8_b, ring of 4", TG.format("llama"), 12.54, _ag_binary_mult),
        ("6U all_reduce_async ff2 32x2048 bfloat8_b, ring of 8", TG.format("llama"), 19.0, _FF2_LLAMA),
        ("6U all_reduce_async ff2 32x1280 bfloat16, ring of 8 (Qwen)", TG.format("qwen"), 19.0, _FF2_QWEN),
        ("6U llama_reduce_scatter 32x3840 bfloat8_b, ring of 4", TG.format("llama"), 9.7, _llama_rs),
    ]


def _decode_figures() -> list[Figure]:
    rows = (  # name, source, measured us, model
        ("6U all_gather binary_mult in the 70B decoder", DECODER.format(""), 7.084, _ag_binary_mult),
        ("6U all_reduce_async DO in the 70B decoder", DECODER.format(""), 13.300, _FF2_LLAMA),
        ("6U all_reduce_async FF2 in the 70B decoder", DECODER.format(""), 13.441, _FF2_LLAMA),
        ("6U llama_reduce_scatter FF3 in the 70B decoder", DECODER.format(""), 7.219, _llama_rs),
        ("6U all_reduce_async DO in the Qwen3-32B decoder", DECODER.format("qwen_"), 11.625, _FF2_QWEN),
        ("6U all_reduce_async FF2 in the Qwen3-32B decoder", DECODER.format("qwen_"), 11.561, _FF2_QWEN),
        ("6U llama_rs_create_heads QKV in the 70B decoder", DECODER.format(""), 8.011, _rs_create_heads),
        ("6U all_reduce_async LM head in the 70B model tail", TAIL.format(""), 30.319, _ar(LM_HEAD, BFP8, 1)),
        ("6U all_reduce_async LM head in the Qwen3-32B tail", TAIL.format("qwen_"), 34.357, _ar(LM_HEAD_QWEN, BFP8, 1)),
    )
    out = []
    for name, src, us, model in rows:
        why = DECODE_MISSES.get(name, "")
        out.append(Figure(name, src, us, us, "us", model, not why, why, group="collectives"))
    return out


DECODE_MISSES: dict[str, str] = {}
"""Decode-sized rows outside the claim, each with why."""


def ceilings() -> list[Ceiling]:
    """The CI's targets that bound a time from above: the 6U prefill and decode collectives."""
    return [*_prefill_ceilings(), *_decode_ceilings()]


def figures() -> list[Figure]:
    """Every measured CI figure here: the DiT all_gather, the all_to_all ranges and the decode
    collectives measured inside the decoders."""
    dit = Figure(
        "T3K all_gather DiT 1x1x3072x8192 bfloat16, ring of 8, 1 link",
        MDP.format("test_all_gather_minimal_perf.py (T3K_dit_perf)"),
        2200.0,
        2500.0,
        "us",
        lambda: _gather(_t3k(), 8, R, 1, 1, (1, 1, 3072, 8192)),
        group="collectives",
    )
    return [dit, *_a2a_figures(), *_decode_figures()]


def main() -> None:
    for f in figures():
        pub = f"{f.low:g}-{f.high:g}"
        print(f"{f.name:<84} {pub:>12} {f.value():>9.2f} {100 * f.error():>+6.1f}%")
    for name, _, target, model in ceilings():
        print(f"{name + ' (ceiling)':<84} {'<= ' + format(target, 'g'):>12} {model():>9.2f}")


if __name__ == "__main__":
    main()
