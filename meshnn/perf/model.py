"""``predict(desc, system)``: the predicted device time of one op, by family, with its dispatch gap.

The op-to-op gap: traced, the device replays commands already in its DRAM and starts the next op
about a microsecond after the last one ends; eager, each op waits for the host to build it and write
its commands to every device's queue (:meth:`ArchPerf.dispatch_ns`).  The host does not wait for the
device: while a long kernel runs it dispatches the ops after it, so an op waits only for the host
time that its predecessors' kernels have not already hidden (:class:`meshnn.perf.recorder.Recorder`
keeps the host's clock).  One op alone (:func:`predict`) can only hide the host behind the kernel
before it (``previous_kernel_ns``); without a previous op, an eager gap is the whole host cost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from meshnn.perf.attention import predict_cache_fill, predict_sdpa
from meshnn.perf.bank_ring import PREDICTORS as BANK_RING
from meshnn.perf.collectives import predict_collective
from meshnn.perf.conv import is_conv, predict_conv
from meshnn.perf.decode_ops import predict_argmax, predict_cache_update, predict_heads_decode, predict_sdpa_decode
from meshnn.perf.desc import MatmulProgram, OpDesc, OpFamily
from meshnn.perf.exchange import predict_exchange
from meshnn.perf.fidelity import (
    GENERIC_DEFAULT,
    NORM_DEFAULT,
    ROTARY_DEFAULT,
    ROTARY_OP_CODES,
    SDPA_DEFAULT,
    MathFidelity,
    default_matmul_fidelity,
)
from meshnn.perf.gather import is_gather, predict_gather
from meshnn.perf.gather_concat import is_all_gather_concat, predict_all_gather_concat
from meshnn.perf.gather_matmul import is_all_gather_matmul, predict_all_gather_matmul
from meshnn.perf.group_norm import is_sharded_group_norm, predict_sharded_group_norm
from meshnn.perf.group_norm_dram import is_dram_welford_group_norm, predict_dram_welford_group_norm
from meshnn.perf.hardware import ArchPerf
from meshnn.perf.heads import is_heads_prefill, predict_heads_prefill
from meshnn.perf.matmul import predict_matmul
from meshnn.perf.moe import predict_moe_compute, predict_moe_gpt
from meshnn.perf.moe_routing import is_masked_bincount, predict_masked_bincount
from meshnn.perf.movement import predict_movement
from meshnn.perf.pool import POOL_DEFAULT, is_pool, predict_pool
from meshnn.perf.prediction import Prediction
from meshnn.perf.ring_matmul import is_ring_matmul, predict_ring_matmul
from meshnn.perf.rms_all_gather import is_rms_all_gather, predict_rms_all_gather
from meshnn.perf.rotary import is_rotary_prefill, predict_rotary_prefill
from meshnn.perf.routed_ffn import is_unified_ffn, predict_unified_ffn
from meshnn.perf.routing_topk import PREDICTORS as ROUTING_TOPK
from meshnn.perf.rs_matmul import is_rs_matmul, predict_rs_matmul
from meshnn.perf.systems import Machine, SystemPerf, machine
from meshnn.perf.tile_ops import predict_tile_op
from meshnn.perf.topk import is_topk, predict_topk

_FPU_FAMILIES = frozenset(
    {
        OpFamily.MATMUL,
        OpFamily.BINARY,
        OpFamily.REDUCTION,
        OpFamily.SOFTMAX,
        OpFamily.NORM,
        OpFamily.SDPA,
        OpFamily.SDPA_DECODE,
        OpFamily.MOE_GPT,
        OpFamily.MOE_COMPUTE,
    }
)


_PREDICTORS: dict[OpFamily, Callable[[OpDesc, Machine], Prediction]] = {
    OpFamily.MATMUL: predict_matmul,
    OpFamily.SDPA: predict_sdpa,
    OpFamily.SDPA_DECODE: predict_sdpa_decode,
    OpFamily.KV_UPDATE: predict_cache_update,
    OpFamily.KV_FILL: predict_cache_fill,
    OpFamily.HEADS_DECODE: predict_heads_decode,
    OpFamily.CONCAT_HEADS_DECODE: predict_heads_decode,
    OpFamily.ARGMAX: predict_argmax,
    OpFamily.MOE_GPT: predict_moe_gpt,
    OpFamily.MOE_COMPUTE: predict_moe_compute,
    **{f: predict_tile_op for f in (OpFamily.UNARY, OpFamily.BINARY, OpFamily.REDUCTION, OpFamily.TYPECAST)},
    **{f: predict_tile_op for f in (OpFamily.SOFTMAX, OpFamily.NORM)},
    **{f: predict_collective for f in (OpFamily.ALL_GATHER, OpFamily.REDUCE_SCATTER, OpFamily.ALL_REDUCE)},
}
_MOVEMENT = (OpFamily.COPY, OpFamily.CONCAT, OpFamily.PERMUTE, OpFamily.TRANSPOSE, OpFamily.TILIZE)
_MOVEMENT += (OpFamily.UNTILIZE, OpFamily.EMBEDDING, OpFamily.SLICE, OpFamily.PAD)
_PREDICTORS.update({f: predict_movement for f in _MOVEMENT})
_PREDICTORS.update({f: predict_exchange for f in OpFamily if f.is_exchange})


def default_fidelity(desc: OpDesc) -> MathFidelity | None:
    """ttnn's fidelity for ``desc`` when its compute-kernel config names none; None for ops that do
    no FPU math (their time does not depend on it)."""
    if desc.fidelity is not None:
        return desc.fidelity
    if desc.family not in _FPU_FAMILIES:
        return None
    if is_pool(desc):  # the pool factory's own default
        return POOL_DEFAULT
    if desc.family is OpFamily.MATMUL:
        config = desc.matmul
        has_program = config is not None and config.program is not MatmulProgram.DEFAULT
        has_grid = desc.core_grid is not None or (config is not None and config.user_core_grid)
        return default_matmul_fidelity(has_program_config=has_program, has_core_grid=has_grid)
    if desc.family is OpFamily.NORM:
        return NORM_DEFAULT
    if desc.family in (OpFamily.MOE_GPT, OpFamily.MOE_COMPUTE):  # the kernels' own compute config
        return MathFidelity.LoFi
    if desc.family in (OpFamily.SDPA, OpFamily.SDPA_DECODE):
        return SDPA_DEFAULT
    if desc.op_code in ROTARY_OP_CODES:
        return ROTARY_DEFAULT
    return GENERIC_DEFAULT


def op_to_op_ns(arch: ArchPerf, *, traced: bool, previous_kernel_ns: float | None, devices: int = 1) -> float:
    """The gap before an op on ``devices`` devices: traced, the replay gap; eager, the host's
    dispatch not hidden by the previous kernel (all of it when there is no previous op)."""
    if traced:
        return arch.op_to_op_traced_ns
    hidden = previous_kernel_ns or 0.0
    return max(arch.op_to_op_traced_ns, arch.dispatch_ns(devices) - hidden)


def predict(
    desc: OpDesc,
    system: str | SystemPerf | Machine,
    *,
    mesh_shape: tuple[int, int] | None = None,
    traced: bool = False,
    previous_kernel_ns: float | None = None,
) -> Prediction:
    """The predicted time of ``desc`` on one device of ``system`` (a name such as ``"t3k"``, a
    :class:`SystemPerf` or a :class:`Machine`), opened as ``mesh_shape`` (default: the system's)."""
    m = machine(system, mesh_shape)
    gap = op_to_op_ns(m.system.arch, traced=traced, previous_kernel_ns=previous_kernel_ns, devices=m.num_devices)
    return replace(predict_kernel(desc, m), gap_ns=gap, traced=traced)


def predict_kernel(desc: OpDesc, m: Machine) -> Prediction:
    """The kernel part of :func:`predict` (no op-to-op gap): it depends on ``desc`` and ``m`` alone,
    so a caller that times the same op again may keep it."""
    fidelity = default_fidelity(desc)
    resolved = desc if fidelity is desc.fidelity else replace(desc, fidelity=fidelity)
    predictor = _PREDICTORS[desc.family]
    if is_conv(desc):
        predictor = predict_conv
    elif is_rotary_prefill(desc):
        predictor = predict_rotary_prefill
    elif is_sharded_group_norm(desc):
        predictor = predict_sharded_group_norm
    elif is_dram_welford_group_norm(desc):
        predictor = predict_dram_welford_group_norm
    elif is_heads_prefill(desc):
        predictor = predict_heads_prefill
    elif is_topk(desc):
        predictor = predict_topk
    elif is_pool(desc):
        predictor = predict_pool
    elif is_gather(desc):
        predictor = predict_gather
    elif is_all_gather_matmul(desc):
        predictor = predict_all_gather_matmul
    elif is_rs_matmul(desc):  # before the ring: its products' config is a ring's
        predictor = predict_rs_matmul
    elif is_ring_matmul(desc):
        predictor = predict_ring_matmul
    elif is_rms_all_gather(desc):
        predictor = predict_rms_all_gather
    elif is_all_gather_concat(desc):
        predictor = predict_all_gather_concat
    elif is_unified_ffn(desc):
        predictor = predict_unified_ffn
    elif is_masked_bincount(desc):
        predictor = predict_masked_bincount
    elif desc.op_code in ROUTING_TOPK:
        predictor = ROUTING_TOPK[desc.op_code]
    elif desc.op_code in BANK_RING:
        predictor = BANK_RING[desc.op_code]
    return replace(predictor(resolved, m), fidelity=fidelity)
