"""What an op is, as the performance model needs it: a frozen description an op fills cheaply.

A :class:`TensorDesc` is one tensor as one device holds it (its per-device padded shape, its dtype
by ttnn's name, its layout and where it lives); an :class:`OpDesc` is one op run: its family, the
tt-metal device-operation name the profiler would print, its tensors and the knobs that change its
time (math fidelity, cores, matmul program config, collective topology, attention chunks).
Sizes are bytes; shapes are elements.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field, replace

from meshnn.device.buffer import BufferType, TensorMemoryLayout
from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout as FormatLayout
from meshnn.formats.layout import Tile
from meshnn.perf.conv_desc import ConvConfig
from meshnn.perf.fidelity import MathFidelity

TILE = 32
"""Elements on each side of a tile."""

TILE_BYTES: dict[str, int] = {d.name: d.tile_size(Tile()) for d in DataType}
"""Bytes of one packed 32x32 tile per dtype name (the formats layer's sizes: bfloat8_b 64 exponent bytes
+ 1024 codes = 1088, bfloat4_b 64 + 512 = 576)."""

ROW_MAJOR_ELEMENT_BYTES: dict[str, int] = {d.name: d.row_major_element_size for d in DataType}
"""Bytes of one ROW_MAJOR element per dtype name (4 for the block floats: ttnn stores them as float32)."""

Layout = FormatLayout
"""``ttnn.Layout``: TILE or ROW_MAJOR (the formats layer's enum)."""

MemoryLayout = TensorMemoryLayout
"""``ttnn.TensorMemoryLayout``: INTERLEAVED or HEIGHT / WIDTH / BLOCK_SHARDED (the device layer's enum)."""


class OpFamily(enum.Enum):
    """What the model computes an op's time as; each has tt-metal's device-operation name."""

    MATMUL = "MatmulDeviceOperation"
    UNARY = "UnaryDeviceOperation"
    BINARY = "BinaryNgDeviceOperation"
    REDUCTION = "ReduceDeviceOperation"
    SOFTMAX = "SoftmaxDeviceOperation"
    NORM = "LayerNormDeviceOperation"  # layer_norm and rms_norm
    SDPA = "ScaledDotProductAttention"
    SDPA_DECODE = "ScaledDotProductAttentionDecode"
    COPY = "CopyDeviceOperation"
    CONCAT = "ConcatDeviceOperation"
    PERMUTE = "PermuteDeviceOperation"
    TRANSPOSE = "TransposeDeviceOperation"
    TILIZE = "TilizeWithValPadding"
    UNTILIZE = "UntilizeWithUnpadding"
    TYPECAST = "TypecastDeviceOperation"
    EMBEDDING = "EmbeddingsDeviceOperation"
    SLICE = "SliceDeviceOperation"
    PAD = "PadDeviceOperation"
    HEADS_DECODE = "NLPCreateQKVHeadsDecodeDeviceOperation"  # a fused qkv row split into heads, per user
    CONCAT_HEADS_DECODE = "NLPConcatHeadsDecodeDeviceOperation"  # heads back into one row per user
    ARGMAX = "ArgMaxDeviceOperation"  # a scalar loop on data-movement cores
    KV_UPDATE = "PagedUpdateCacheDeviceOperation"  # one token per user written into the cache
    KV_FILL = "PagedFillCacheDeviceOperation"  # a whole prompt written into the cache
    MOE_GPT = "MoEGPTDeviceOperation"  # gpt-oss's fused experts: DRAM-sharded bfloat4_b weights, 12 ring cores
    MOE_COMPUTE = "MoEComputeDeviceOperation"  # DeepSeek's fused experts (any sizes), then the combine's exchange
    ALL_GATHER = "AllGatherAsyncDeviceOperation"
    REDUCE_SCATTER = "ReduceScatterMinimalAsyncDeviceOperation"
    ALL_REDUCE = "AllReduceAsyncDeviceOperation"
    POINT_TO_POINT = "PointToPointOp"  # one shard from one device to another
    BROADCAST = "Broadcast"  # one device's shard to every device of its group
    ALL_BROADCAST = "AllBroadcast"  # every device's shard to every device of its group
    BARRIER = "Barrier"  # a semaphore round over the group, no payload
    ALL_TO_ALL_DISPATCH = "AllToAllDispatchDeviceOperation"  # tokens to the devices of their experts
    ALL_TO_ALL_COMBINE = "AllToAllCombineDeviceOperation"  # expert outputs back to their tokens' devices
    ALL_TO_ALL = "AllToAllAsyncGenericDeviceOperation"  # chunk i of every device's shard to device i
    NEIGHBOR_PAD = "NeighborPadAsyncDeviceOperation"  # each device's edge rows to its neighbours (halos)
    SLICE_RESHARD = "SliceReshardAsyncDeviceOperation"  # a slice of the joined pieces, split again

    @property
    def is_collective(self) -> bool:
        return self in _COLLECTIVES

    @property
    def is_exchange(self) -> bool:
        """A collective timed by :mod:`meshnn.perf.exchange` (bytes and hops of its own pattern)."""
        return self in _COLLECTIVES[3:]


_COLLECTIVES = tuple(OpFamily)[tuple(OpFamily).index(OpFamily.ALL_GATHER) :]
"""The families that move data between devices (all_gather first, the exchanges from point_to_point)."""


class MatmulProgram(enum.Enum):
    """The matmul program config kind, named as ttnn names the config class."""

    DEFAULT = "default"  # no program config: ttnn picks one over the compute grid
    MULTICAST_2D = "MatmulMultiCoreReuseMultiCastProgramConfig"
    MULTICAST_1D = "MatmulMultiCoreReuseMultiCast1DProgramConfig"
    DRAM_SHARDED = "MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig"
    REUSE = "MatmulMultiCoreReuseProgramConfig"


class Topology(enum.Enum):
    """``ttnn.Topology`` of a collective."""

    LINEAR = "Linear"
    RING = "Ring"


class Fabric(enum.Enum):
    """The fabric routing a collective's packets: 1D or 2D (a bigger header, a slower hop)."""

    FABRIC_1D = "1D"
    FABRIC_2D = "2D"


_IN_PLACE = frozenset({OpFamily.KV_UPDATE, OpFamily.KV_FILL})
"""Families that write into an input (the cache) and have no output tensor of their own."""


def dtype_name(dtype: object) -> str:
    """ttnn's dtype name (``BFLOAT8_B``) from a name in any case, ``DataType.X``, or an enum."""
    name = getattr(dtype, "name", dtype)
    if not isinstance(name, str):
        raise MeshnnTypeError(f"dtype must be a ttnn dtype or its name, got {dtype!r}")
    name = name.rsplit(".", 1)[-1].upper()
    if name not in TILE_BYTES:
        raise MeshnnValueError(f"unknown dtype {dtype!r}; known: {', '.join(TILE_BYTES)}")
    return name


@dataclass(frozen=True, slots=True)
class TensorDesc:
    """One device's share of a tensor: ``shape`` is the padded per-device shape in elements."""

    shape: tuple[int, ...]
    dtype: str = "BFLOAT16"
    layout: Layout = Layout.TILE
    buffer: BufferType = BufferType.DRAM
    memory: MemoryLayout = MemoryLayout.INTERLEAVED
    logical_shape: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        shape = tuple(int(d) for d in self.shape)
        if not shape or any(d < 0 for d in shape):
            raise MeshnnValueError(f"TensorDesc: shape must be non-empty and non-negative, got {self.shape!r}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "dtype", dtype_name(self.dtype))
        for name, kind in (("layout", Layout), ("buffer", BufferType), ("memory", MemoryLayout)):
            if not isinstance(getattr(self, name), kind):
                raise MeshnnTypeError(f"TensorDesc.{name} must be a {kind.__name__}, got {getattr(self, name)!r}")
        if self.buffer is BufferType.SYSTEM_MEMORY:
            raise MeshnnValueError("TensorDesc: a device tensor lives in DRAM or L1, not SYSTEM_MEMORY")
        if self.logical_shape is not None:
            object.__setattr__(self, "logical_shape", tuple(int(d) for d in self.logical_shape))

    @property
    def volume(self) -> int:
        return math.prod(self.shape)

    @property
    def tiles(self) -> int:
        """32x32 tiles, each of the last two dims rounded up to whole tiles."""
        rows = self.shape[-2] if len(self.shape) > 1 else 1
        batch = math.prod(self.shape[:-2]) if len(self.shape) > 2 else 1
        return batch * math.ceil(rows / TILE) * math.ceil(self.shape[-1] / TILE)

    @property
    def tile_bytes(self) -> int:
        return TILE_BYTES[self.dtype]

    @property
    def nbytes(self) -> int:
        """Bytes this device holds, in the dtype's packed size (TILE) or its element size."""
        if self.layout is Layout.TILE:
            return self.tiles * TILE_BYTES[self.dtype]
        return self.volume * ROW_MAJOR_ELEMENT_BYTES[self.dtype]

    @property
    def in_dram(self) -> bool:
        return self.buffer.is_dram

    @property
    def sharded(self) -> bool:
        return self.memory is not MemoryLayout.INTERLEAVED

    @property
    def memory_name(self) -> str:
        """The profiler's ``{BUFFER}_{LAYOUT}`` part of ``DEV_n_DRAM_INTERLEAVED``."""
        return f"{self.buffer.name}_{self.memory.name}"


@dataclass(frozen=True, slots=True)
class MatmulConfig:
    """A matmul's program config: its kind, grid (x, y) and per-core output block in tiles;
    ``in0_block_w``: the K tiles of one inner block (None: not known; K then counts as one block);
    ``packer_l1_acc`` and ``fp32_acc``: its compute-kernel config's ``packer_l1_acc`` and
    ``fp32_dest_acc_en`` (None: the op was given none; ttnn's matmul default then applies, float32
    accumulation only for a float32 output, L1 accumulation otherwise); ``gather_in0``: the 1-D config's
    ``gather_in0`` (in0 gathered around a ring of cores, not multicast); ``hop_cores``: the cores of its
    ``hop_cores`` (ring cores that relay in0's shards but compute nothing; 0 for none)."""

    program: MatmulProgram = MatmulProgram.DEFAULT
    grid: tuple[int, int] | None = None
    per_core_m: int | None = None
    per_core_n: int | None = None
    user_core_grid: bool = False  # ``core_grid=`` given instead of a program config
    mcast_in0: bool = True  # a 1-D program multicasts in0 (one sender, N split); False: in1 (M split)
    in0_block_w: int | None = None
    packer_l1_acc: bool | None = None
    fp32_acc: bool | None = None
    gather_in0: bool = False  # a 1-D program that passes in0's shards around a ring of cores (meshnn.perf.ring_matmul)
    hop_cores: int = 0  # relay cores in that ring (ttnn's hop_cores): each adds a transfer to the ring's path
    out_block_h: int | None = None  # a 2-D program's output block in tiles (None: the whole per-core block)
    out_block_w: int | None = None  # (meshnn.perf.matmul_out_blocks)


@dataclass(frozen=True, slots=True)
class CollectiveConfig:
    """A collective's knobs; ``cluster_axis`` None means all devices of the mesh as one line.
    ``aligned`` is set by a recorder, not by ttnn: the call follows a collective on the same devices
    with no host wait between them, so its devices start together (no launch skew to wait out)."""

    topology: Topology = Topology.LINEAR
    cluster_axis: int | None = None
    num_links: int | None = None  # asked for; None: every usable link
    dim: int = 0
    fabric: Fabric = Fabric.FABRIC_1D
    hops: int | None = None  # a point-to-point route's hops (None: the group's line)
    peers: int | None = None  # devices each token goes to (an all-to-all dispatch's top-k; None: all)
    aligned: bool = False  # its devices start together: the op before it on them was a collective
    devices: int | None = None  # with no cluster_axis: the devices it runs on, where fewer than the mesh's


@dataclass(frozen=True, slots=True)
class AttentionConfig:
    """SDPA's chunking and causality; ``kv_len`` is the cache length read by a decode step (None: the
    whole cache, when the positions are a device tensor); ``max_cores_per_head_batch`` caps the cores
    a decode step gives one (user, kv head) pair (SDPAProgramConfig's field, default 16); ``fp32_dest``:
    the compute kernel config's ``fp32_dest_acc_en`` (ttnn's SDPA default: off)."""

    q_chunk: int = 32
    k_chunk: int = 32
    causal: bool = True
    kv_len: int | None = None
    max_cores_per_head_batch: int = 16
    fp32_dest: bool = False


@dataclass(frozen=True, slots=True)
class OpDesc:
    """One op run, as the model predicts it.  ``op_code`` defaults to the family's tt-metal name."""

    family: OpFamily
    inputs: tuple[TensorDesc, ...]
    outputs: tuple[TensorDesc, ...]
    op_code: str = ""
    name: str = ""  # the ttnn call, e.g. "ttnn.linear"
    fidelity: MathFidelity | None = None
    core_grid: tuple[int, int] | None = None
    matmul: MatmulConfig | None = None
    collective: CollectiveConfig | None = None
    attention: AttentionConfig | None = None
    conv: ConvConfig | None = None  # a conv2d's window and program flags (meshnn.perf.conv times it)
    unary_ops: tuple[str, ...] = ()  # the SFPU ops of a unary (or fused into a binary / matmul)
    attributes: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        if not isinstance(self.family, OpFamily):
            raise MeshnnTypeError(f"OpDesc.family must be an OpFamily, got {self.family!r}")
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "outputs", tuple(self.outputs))
        if not self.inputs:
            raise MeshnnValueError(f"OpDesc({self.family.name}) needs at least one input tensor")
        if not self.outputs and self.family not in _IN_PLACE:
            raise MeshnnValueError(f"OpDesc({self.family.name}) needs at least one output tensor")
        if not self.op_code:
            object.__setattr__(self, "op_code", self.family.value)
        if self.fidelity is not None:
            object.__setattr__(self, "fidelity", MathFidelity.parse(self.fidelity))

    def with_attribute(self, key: str, value: str) -> OpDesc:
        """This desc with ``attributes``' ``key`` set to ``value`` (an earlier value of ``key`` dropped)."""
        kept = tuple(a for a in self.attributes if a[0] != key)
        return replace(self, attributes=(*kept, (key, value)))

    @property
    def bytes_in(self) -> int:
        return sum(t.nbytes for t in self.inputs)

    @property
    def bytes_out(self) -> int:
        return sum(t.nbytes for t in self.outputs)
