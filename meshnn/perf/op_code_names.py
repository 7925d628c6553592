"""Op codes (tt-metal device-operation names, a profile's ``OP CODE``) beyond the family names of
:class:`meshnn.perf.desc.OpFamily`: the names meshnn records for the ops it models (each op's
registry ``device_operation``, checked against the registry by tests/perf/test_op_codes.py), and
the names other tt-metal versions give the same programs.

Sources: tt-metal's 2026-06 tree (``struct ...DeviceOperation`` under ttnn/cpp/ttnn/operations/)
and the same tree's 2025 history (the older op structs: ``Matmul``, ``Transpose``, ``Reduce``,
``TilizeWithValPadding``... before their move to the ``...DeviceOperation`` form).
"""

from __future__ import annotations

from meshnn.perf.desc import OpFamily

F = OpFamily

RECORDED: dict[OpFamily, tuple[str, ...]] = {
    F.ALL_TO_ALL: ("AllToAllAsyncDeviceOperation",),
    F.ALL_TO_ALL_COMBINE: (
        "CombineDeviceOperation",
        "SelectiveReduceCombineDeviceOperation",
    ),
    F.ALL_TO_ALL_DISPATCH: (
        "AllToAllDispatchMetadataDeviceOperation",
        "DispatchDeviceOperation",
    ),
    F.ARGMAX: (
        "MaskedBincountDeviceOperation",
        "OffsetCumsumDeviceOperation",
    ),
    F.BINARY: (
        "IsInDeviceOperation",
        "MorehAdamOperation",
        "MorehAdamWDeviceOperation",
        "MorehDotBackwardOperation",
        "MorehMeanBackwardOperation",
        "MorehNllLossBackwardDeviceOperation",
        "MorehNllLossUnreducedBackwardDeviceOperation",
        "MorehNormBackwardOperation",
        "MorehSgdOperation",
        "MorehSumBackwardOperation",
        "RepeatAndInterleaveEltwiseMul",
        "RotaryEmbeddingHfDeviceOperation",
        "RotaryEmbeddingIndexedDeviceOperation",
        "WhereDeviceOperation",
    ),
    F.COPY: (
        "BcastToOperation",
        "CreateQKVHeadsSeparateTensorsDeviceOperation",
        "DramPrefetcher",
        "ExampleDeviceOperation",
        "ExampleMultipleReturnDeviceOperation",
        "GatherDeviceOperation",
        "InterleavedToShardedPartialDeviceOperation",
        "MoeExpertTokenRemapDeviceOperation",
        "MoeRoutingRemapDeviceOperation",
        "NlpCreateHeadsBoltzDeviceOperation",
        "NlpCreateHeadsFalcon7BDeviceOperation",
        "NlpCreateHeadsSegformerDeviceOperation",
        "NlpCreateHeadsVitDeviceOperation",
        "NlpKVCacheLoadSliceDeviceOperation",
        "ReshapeDeviceOperation",
        "RotateHalfDeviceOperation",
        "ShardedToInterleavedPartialDeviceOperation",
        "SplitFusedQKVAndSplitHeadsDeviceOperation",
        "TopKDeviceOperation",
        "UpSample",
    ),
    F.KV_FILL: (
        "InsertDeviceOperation",
        "UpdatePaddedKvCacheDeviceOperation",
        "ZeroPaddedKvCacheDeviceOperation",
    ),
    F.KV_UPDATE: ("UpdateKVCacheOperation",),
    F.MATMUL: (
        "Conv2dDeviceOperation",
        "Conv3dDeviceOperation",
        "MoEGateMMDeviceOperation",
    ),
    F.MOE_COMPUTE: ("UnifiedRoutedExpertFfnDeviceOperation",),
    F.NORM: (
        "BatchNormOperation",
        "FusedRMSNormPostAllGather",
        "FusedRMSNormPreAllGather",
        "GroupNorm",
        "MorehGroupNormBackwardInputGradOperation",
        "MorehGroupNormOperation",
        "PostAllGatherDeviceOperation",
        "PreAllGatherDeviceOperation",
        "RMSAllGather",
    ),
    F.POINT_TO_POINT: (
        "RecvAsync",
        "RecvAsyncH2DDeviceOperation",
        "RecvDirectAsyncDeviceOperation",
        "ReduceToRootOp",
        "SendAsync",
        "SendAsyncD2HDeviceOperation",
        "SendDirectAsyncDeviceOperation",
    ),
    F.REDUCE_SCATTER: ("Matmul_RS",),
    F.REDUCTION: (
        "DeepseekGroupedGateDeviceOperation",
        "DeepseekMoEFastReduceNCDeviceOperation",
        "DeepseekMoEFastReduceNCFusedDeviceOperation",
        "DeepseekMoeGateDeviceOperation",
        "GeneralizedMoeGateDeviceOperation",
        "HCSumReduce",
        "IndexerScoreDeviceOperation",
        "MoeGroupedTopkDeviceOperation",
        "MorehClipGradNormStep1Operation",
        "MorehDotOperation",
        "MorehMeanOperation",
        "MorehNllLossStep2DeviceOperation",
        "MorehNormOperation",
        "MorehSumOperation",
        "Pool2D",
        "PostCombineReduceDeviceOperation",
        "ProdAllDeviceOperation",
        "ProdNcDeviceOperation",
        "TopkLargeIndicesDeviceOperation",
        "TopkRouterGptDeviceOperation",
    ),
    F.SDPA: (
        "ExpRingJointSDPADeviceOperation",
        "JointSDPADeviceOperation",
        "RingJointSDPADeviceOperation",
    ),
    F.SLICE: (
        "ExtractDeviceOperation",
        "MeshPartitionDeviceOperation",
        "PaddedSliceDeviceOperation",
    ),
    F.TILIZE: ("DeepseekMoEPostCombineTilizeDeviceOperation",),
    F.TYPECAST: (
        "PerTokenCastBackDeviceOperation",
        "PerTokenCastToFp8DeviceOperation",
    ),
    F.UNARY: (
        "GeluBackwardDeviceOperation",
        "GenericOpDeviceOperation",
    ),
    F.UNTILIZE: ("UntilizeWithUnpaddingDeviceOperation",),
}
"""Op codes meshnn records for ops it models, by the family the model times them as."""

OTHER_VERSIONS: dict[str, str] = {
    # tt-metal 2025's op structs (the profiler names the struct) -> the name meshnn records
    "Matmul": F.MATMUL.value,
    "Transpose": F.TRANSPOSE.value,
    "Reduce": F.REDUCTION.value,
    "Pad": F.PAD.value,
    "Slice": F.SLICE.value,
    "Tilize": "TilizeDeviceOperation",
    "Untilize": "UntilizeDeviceOperation",
    "Typecast": F.TYPECAST.value,
    "ArgMax": F.ARGMAX.value,
    "Softmax": F.SOFTMAX.value,
    "LayerNorm": F.NORM.value,
    "Embeddings": F.EMBEDDING.value,
    "UpdateCache": "UpdateKVCacheOperation",
    "UpdateCacheOperation": "UpdateKVCacheOperation",
    "Prod": "ProdNcDeviceOperation",
    "ProdOperation": "ProdNcDeviceOperation",
    "WhereDeviceOperation": "TernaryDeviceOperation",
    "ScaledDotProductAttention": F.SDPA.value,
    "ScaledDotProductAttentionDecode": F.SDPA_DECODE.value,
    # tt-metal 2026's names of programs meshnn records by their 2025 name
    "SDPAOperation": F.SDPA.value,
    "SdpaDecodeDeviceOperation": F.SDPA_DECODE.value,
    "TilizeWithValPaddingDeviceOperation": F.TILIZE.value,
    "UntilizeWithUnpaddingDeviceOperation": F.UNTILIZE.value,
    "RMSAllGatherDeviceOperation": "RMSAllGather",
    "FusedRMSNormPreAllGatherDeviceOperation": "FusedRMSNormPreAllGather",
    "FusedRMSNormPostAllGatherDeviceOperation": "FusedRMSNormPostAllGather",
    "GroupNormDeviceOperation": "GroupNorm",
    "HCSumReduceDeviceOperation": "HCSumReduce",
    "RepeatAndInterleaveEltwiseMulDeviceOperation": "RepeatAndInterleaveEltwiseMul",
    "DramPrefetcherOperation": "DramPrefetcher",
    "SendAsyncDeviceOperation": "SendAsync",
    "RecvAsyncDeviceOperation": "RecvAsync",
    "AllGatherConcatDeviceOperation": "AllGatherConcat",
    "AllReduceCreateQkvHeadsDeviceOperation": "AllReduceCreateQkvHeads",
    "AllBroadcastDeviceOperation": F.ALL_BROADCAST.value,
    "BroadcastDeviceOperation": F.BROADCAST.value,
}
"""Another tt-metal version's name of a program -> the name meshnn records for it."""
