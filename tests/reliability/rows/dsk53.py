"""Bad calls of DeepSeek-V3's decode ops (stop 53): ``ttnn.experimental.deepseek.moe``'s
``deepseek_moe_gate``, ``generalized_moe_gate`` and ``moe_gate_mm``, ``.mla.matmul_wo`` and
``ttnn.experimental.deepseek_grouped_gate``.  The gates' tensors are built per row on ``e.mesh``
(one 32x32 shard in DRAM bank 0, replicated; freed again after the call); ``e.a`` is float32 TILE
[1, 3, 40], ``e.a_bf16`` its bfloat16 twin (interleaved)."""

from __future__ import annotations

import torch

import meshnn as ttnn

from ..cases import BF16, DEAD, TYPE, VALUE, Case

GATE = "experimental.deepseek.moe.deepseek_moe_gate"
GENERAL = "experimental.deepseek.moe.generalized_moe_gate"
GROUPED = "experimental.deepseek_grouped_gate"
GATE_MM = "experimental.deepseek.moe.moe_gate_mm"
WO = "experimental.deepseek.mla.matmul_wo"


def _face(e, dtype=BF16, shape=(1, 16, 16), shard=(32, 32), sharded=True):
    core = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(0, 0))])
    spec = ttnn.ShardSpec(core, shard, ttnn.ShardOrientation.ROW_MAJOR)
    config = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.DRAM, spec)
    values = torch.zeros(shape, dtype=torch.int32 if dtype == ttnn.uint16 else torch.float32)
    memory = config if sharded else ttnn.DRAM_MEMORY_CONFIG
    made = ttnn.from_torch(values, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=e.mesh, memory_config=memory)
    e.dsk53_made.append(made)
    return made


def _freeing(call):
    """``call(e)`` on tensors it builds (in DRAM: the table fills L1), each freed again before the
    error propagates, so the refused call leaves the memory state as it found it."""

    def run(e):
        e.dsk53_made = []
        try:
            return call(e)
        finally:
            for tensor in e.dsk53_made:
                ttnn.deallocate(tensor)

    return run


def _gate(e, op=None, **changes):
    """A gate call on good tensors but for ``changes`` (tensors by name, or keyword arguments)."""
    names = ("bias_tensor", "input_indices_tensor", "output_tensor", "output_indices_tensor")
    dtypes = (BF16, ttnn.uint16, BF16, ttnn.uint16)
    x = changes.pop("input_tensor", None)
    x = _face(e) if x is None else x
    tensors = {n: changes.pop(n) if n in changes else _face(e, d) for n, d in zip(names, dtypes, strict=True)}
    fn = op or ttnn.experimental.deepseek.moe.deepseek_moe_gate
    return fn(x, **tensors, **changes)


def _general(e, **changes):
    return _gate(e, ttnn.experimental.deepseek.moe.generalized_moe_gate, **changes)


def _scores(e, experts=256):
    made = ttnn.from_torch(torch.zeros(1, 32, experts), dtype=BF16, layout=ttnn.TILE_LAYOUT, device=e.mesh)
    e.dsk53_made.append(made)
    return made


def _grouped(e, scores=None, bias=None, **kwargs):
    scores = _scores(e) if scores is None else scores
    return ttnn.experimental.deepseek_grouped_gate(scores, _scores(e) if bias is None else bias, **kwargs)


def _gate_mm(e, x=None, layer_id=0):
    t = e.a_bf16
    return ttnn.experimental.deepseek.moe.moe_gate_mm(
        t if x is None else x, w_tensor=t, output_tensor=t, layer_id=layer_id, column_id=0
    )


def _wo(e, x=None, w=None, layer_id=0):
    t = e.a_bf16
    return ttnn.experimental.deepseek.mla.matmul_wo(
        t if x is None else x, w_tensor=t if w is None else w, output_tensor=t, layer_id=layer_id
    )


def rows() -> list[Case]:
    return [Case(c.target, c.what, _freeing(c.call), c.error, c.names) for c in _rows()]


def _rows() -> list[Case]:
    return [
        Case(GATE, "float32 logits", lambda e: _gate(e, input_tensor=e.a), VALUE, "input_tensor"),
        Case(GATE, "interleaved bias", lambda e: _gate(e, bias_tensor=_face(e, sharded=False)), VALUE, "bias_tensor"),
        Case(GATE, "logits deallocated", lambda e: _gate(e, input_tensor=e.freed), DEAD, "input_tensor"),
        Case(GATE, "enable_sigmoid a str", lambda e: _gate(e, enable_sigmoid="yes"), TYPE, "enable_sigmoid"),
        Case(GATE, "eps a str", lambda e: _gate(e, eps="1e-20"), TYPE, "eps"),
        Case(
            GATE,
            "a 64x32 logits shard",
            lambda e: _gate(
                e,
                **{
                    n: _face(e, d, (2, 16, 16), (64, 32))
                    for n, d in (("input_tensor", BF16), ("bias_tensor", BF16), ("input_indices_tensor", ttnn.uint16))
                },
            ),
            VALUE,
            "[Ss]hard shape",
        ),
        Case(
            GATE,
            "indices of another shape",
            lambda e: _gate(e, input_indices_tensor=_face(e, ttnn.uint16, (1, 8, 32))),
            VALUE,
            "input_indices_tensor",
        ),
        Case(GENERAL, "topk 5", lambda e: _general(e, topk=5), VALUE, "topk"),
        Case(GENERAL, "topk -1", lambda e: _general(e, topk=-1), TYPE, "topk"),
        Case(
            GENERAL,
            "grouped softmax",
            lambda e: _general(e, grouped=True, output_softmax=True),
            VALUE,
            "output_softmax",
        ),
        Case(
            GENERAL,
            "three blocks a shard",
            lambda e: _general(
                e,
                **{
                    n: _face(e, d, (1, 3, 16, 16), (96, 32))
                    for n, d in (("input_tensor", BF16), ("bias_tensor", BF16), ("input_indices_tensor", ttnn.uint16))
                },
            ),
            VALUE,
            "blocks",
        ),
        Case(GROUPED, "float32 scores", lambda e: _grouped(e, scores=e.a), VALUE, "scores"),
        Case(GROUPED, "128 experts", lambda e: _grouped(e, _scores(e, 128), _scores(e, 128)), VALUE, "Experts"),
        Case(GROUPED, "bias of another shape", lambda e: _grouped(e, bias=_scores(e, 128)), VALUE, "bias"),
        Case(GROUPED, "n_groups 4", lambda e: _grouped(e, n_groups=4), VALUE, "n_groups"),
        Case(GROUPED, "topk_groups a str", lambda e: _grouped(e, topk_groups="4"), TYPE, "topk_groups"),
        Case(GROUPED, "memory_config a str", lambda e: _grouped(e, memory_config="L1"), TYPE, "memory_config"),
        Case(GATE_MM, "layer_id -1", lambda e: _gate_mm(e, layer_id=-1), TYPE, "layer_id"),
        Case(GATE_MM, "float32 input", lambda e: _gate_mm(e, x=e.a), VALUE, "input_tensor"),
        Case(GATE_MM, "interleaved input", lambda e: _gate_mm(e), VALUE, "input_tensor"),
        Case(WO, "rank-1 input", lambda e: _wo(e, x=e.row7), VALUE, "rank"),
        Case(WO, "weights on the host", lambda e: _wo(e, w=e.host), VALUE, "w_tensor"),
        Case(WO, "layer_id a float", lambda e: _wo(e, layer_id=1.0), TYPE, "layer_id"),
    ]
