"""tt-metal's device-operation names (a profiler's ``OP CODE``) and the family the model times each
as: the names meshnn writes, the older names tt-metal has used for the same programs, and the
name patterns of op families (``AllGather...``, ``Matmul...``).  An op code none of these knows has
no family (a measured row the model cannot check).
"""

from __future__ import annotations

from meshnn.perf.desc import OpFamily
from meshnn.perf.op_code_names import OTHER_VERSIONS, RECORDED

F = OpFamily
ALIASES: dict[str, str] = {
    "NLPCreateHeadsDecodeDeviceOperation": F.HEADS_DECODE.value,
    "BinaryDeviceOperation": F.BINARY.value,
    "Embeddings": F.EMBEDDING.value,
    "Untilize": "UntilizeDeviceOperation",
    "PagedFusedUpdateCacheDeviceOperation": F.KV_UPDATE.value,
    "ReduceScatterDeviceOperation": F.REDUCE_SCATTER.value,
    "AllGatherDeviceOperation": F.ALL_GATHER.value,
    "AllReduceDeviceOperation": F.ALL_REDUCE.value,
    **OTHER_VERSIONS,
}
"""Other names of the same programs, to the name the model uses."""

_CODES: dict[str, OpFamily] = {
    **{f.value: f for f in OpFamily},
    "TernaryDeviceOperation": F.BINARY,
    "RotaryEmbeddingDeviceOperation": F.BINARY,
    "RotaryEmbeddingLlamaDeviceOperation": F.BINARY,
    "RotaryEmbeddingLlamaFusedQKDeviceOperation": F.BINARY,
    "FastReduceNCDeviceOperation": F.REDUCTION,
    "UpdateKVCacheOperation": F.KV_UPDATE,  # tt-metal's one program for update_cache and fill_cache
    "RingDistributedSdpaDeviceOperation": F.SDPA,
    "SplitDeviceOperation": F.SLICE,
    "TilizeDeviceOperation": F.TILIZE,
    "UntilizeDeviceOperation": F.UNTILIZE,
    "LayerNormPreAllGatherDeviceOperation": F.NORM,
    "LayerNormPostAllGatherDeviceOperation": F.NORM,
}
_COPIES = (
    "ReshapeViewDeviceOperation",
    "RepeatDeviceOperation",
    "CloneOperation",
    "InterleavedToShardedDeviceOperation",
    "ShardedToInterleavedDeviceOperation",
    "ReshardDeviceOperation",
    "CreateQKVHeadsDeviceOperation",
    "NlpCreateHeadsDeviceOperation",
    "ConcatenateHeadsDeviceOperation",
    "NLPConcatHeadsDeviceOperation",
    "MoveDeviceOperation",
)
_CODES.update(dict.fromkeys(_COPIES, F.COPY))
_CODES.update({code: family for family, codes in RECORDED.items() for code in codes})
_PATTERNS = (  # (substring of the op code, family): first match wins
    ("AllGather", F.ALL_GATHER),
    ("ReduceScatter", F.REDUCE_SCATTER),
    ("AllReduce", F.ALL_REDUCE),
    ("ScaledDotProductAttentionDecode", F.SDPA_DECODE),
    ("ScaledDotProductAttention", F.SDPA),
    ("Matmul", F.MATMUL),
    ("Binary", F.BINARY),
    ("Unary", F.UNARY),
    ("Softmax", F.SOFTMAX),
    ("LayerNorm", F.NORM),
)


def canonical(op_code: str) -> str:
    """The model's name for ``op_code`` (its aliases resolved, ``(torch)`` host ops kept as they are)."""
    code = op_code.strip()
    return ALIASES.get(code, code)


def family_of(op_code: str) -> OpFamily | None:
    """The family the model times ``op_code`` as, or None for a program it does not know."""
    code = canonical(op_code)
    known = _CODES.get(code)
    if known is not None:
        return known
    return next((family for part, family in _PATTERNS if part in code), None)
