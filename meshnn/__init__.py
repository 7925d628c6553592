"""meshnn: TTNN's multi-device tensor runtime in Python, on a faithful simulated mesh.
``import meshnn as ttnn`` gives TTNN's names; this module only re-exports them from the layers."""

import os as _os

import meshnn.lazy_exports as _lazy_exports
from meshnn.device.arch import SYSTEMS, Arch, system_spec
from meshnn.device.bank import MemoryView
from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import (
    CoreCoord,
    CoreGrid,
    CoreRange,
    CoreRangeSet,
    corerange_to_cores,
    num_cores_to_corerangeset,
    num_cores_to_corerangeset_in_subcoregrids,
)
from meshnn.device.dram_workers import NOC
from meshnn.device.nd_shard import NdShardSpec, ShardDistributionStrategy
from meshnn.device.work_split import grid_to_cores, split_work_to_cores
from meshnn.distributed.context import end_all_ranks, get_context, launched_under_mpi, set_rank_rows
from meshnn.distributed.world import (  # tt-run's split jobs (sub-contexts)
    Rank,
    Size,
    SubcontextId,
    distributed_context_allgather_int,
    distributed_context_barrier,
    distributed_context_get_rank,
    distributed_context_get_size,
    distributed_context_is_initialized,
    distributed_context_local_to_world_rank,
    distributed_context_subcontext_count,
    distributed_context_subcontext_id,
    distributed_context_subcontext_size,
    distributed_context_subcontext_sizes,
    distributed_context_world_rank,
    distributed_context_world_size,
    init_distributed_context,
)
from meshnn.errors import (
    DeallocatedError,
    DeviceClosedError,
    DistributedError,
    HostMemoryError,
    InvalidFreeError,
    MeshnnError,
    MeshnnTypeError,
    MeshnnValueError,
    NotImplementedByMeshnn,
    OutOfMemoryError,
    PlanningError,
    QueueError,
    TensorFileError,
    TensorFileWriteError,
    TraceError,
    WrongMeshError,
)
from meshnn.formats.dtypes import DataType
from meshnn.formats.layout import Layout, Tile, element_size, tile_size
from meshnn.host.interrupts import arm as _arm_interrupts
from meshnn.mesh import (
    BufferRegion,
    DeviceLocalBufferConfig,
    MeshBuffer,
    MeshBufferLayout,
    MeshCommandQueue,
    MeshCoordinate,
    MeshCoordinateRange,
    MeshCoordinateRangeSet,
    MeshDevice,
    MeshEvent,
    MeshShape,
    MeshWorkload,
    Program,
    ReplicatedBufferConfig,
    ShardDataTransfer,
    ShardedBufferConfig,
    close_mesh_device,
    event_query,
    event_synchronize,
    open_mesh_device,
    reports,
    synchronize_device,
)
from meshnn.mesh.cluster import (
    _ttnn,
    cluster,
    get_arch_name,
    get_dram_alignment,
    get_l1_alignment,
    get_max_worker_l1_unreserved_size,
)
from meshnn.mesh.cluster import namespace as _namespace
from meshnn.mesh.device_config import (
    DeviceSettings,
    DispatchCoreAxis,
    DispatchCoreConfig,
    DispatchCoreType,
    FabricTensixConfig,
    MeshType,
)
from meshnn.mesh.entry_points import (
    ClearDefaultDevice,
    CloseDevice,
    CloseDevices,
    CreateDevice,
    CreateDevices,
    GetDefaultDevice,
    ReadDeviceProfiler,
    SetDefaultDevice,
    close_device,
    create_mesh_device,
    manage_device,
    open_device,
)
from meshnn.mesh.global_circular_buffer import create_global_circular_buffer
from meshnn.mesh.global_semaphore import (
    create_global_semaphore,
    get_global_semaphore_address,
    reset_global_semaphore_value,
)
from meshnn.mesh.memory_report import dump_device_memory_state, get_memory_view, memory_report
from meshnn.mesh.memory_timeline import MemoryTimeline
from meshnn.mesh.op_hooks import register_post_operation_hook, register_pre_operation_hook
from meshnn.mesh.planning import planning
from meshnn.mesh.queue_events import record_event, wait_for_event
from meshnn.mesh.socket import MeshSocket, create_socket_pair
from meshnn.mesh.socket_config import (
    H2DMode,
    MeshCoreCoord,
    SocketConfig,
    SocketConnection,
    SocketEndpoint,
    SocketMemoryConfig,
)
from meshnn.mesh.sub_device import SubDevice, SubDeviceId, SubDeviceManagerId
from meshnn.mesh.system import (
    FabricConfig,
    FabricManagerMode,
    FabricReliabilityMode,
    FabricRouterConfig,
    FabricUDMMode,
    GetNumAvailableDevices,
    get_device_ids,
    get_fabric_config,
    get_num_devices,
    get_num_pcie_devices,
    get_pcie_device_ids,
    get_tt_fabric_max_payload_size_bytes,
    get_tt_fabric_packet_header_size_bytes,
    set_fabric_config,
    using_distributed_env,
)
from meshnn.mesh.system import get_pcie_device_id as GetPCIeDeviceID  # ttnn's name
from meshnn.mesh.trace import MeshTraceId, begin_trace_capture, end_trace_capture, execute_trace, release_trace
from meshnn.ops.ccl.arguments import ReduceType, Topology
from meshnn.ops.ccl.moe_enums import DispatchAlgorithm, WorkerMode  # ttnn exports these two at its top level
from meshnn.ops.complex.tensor import ComplexTensor
from meshnn.ops.config import (
    BlackholeComputeKernelConfig,
    GrayskullComputeKernelConfig,
    LayerNormDefaultProgramConfig,
    LayerNormDistributedDefaultProgramConfig,
    LayerNormShardedMultiCoreProgramConfig,
    MathFidelity,
    SDPAProgramConfig,
    SoftmaxDefaultProgramConfig,
    SoftmaxProgramConfig,
    SoftmaxShardedMultiCoreProgramConfig,
    ThrottleLevel,
    UnaryOpType,
    UnaryWithParam,
    WormholeComputeKernelConfig,
    init_device_compute_kernel_config,
)
from meshnn.ops.conv.config import (  # the conv configs (ttnn.Conv2dConfig...)
    Conv1dConfig,
    Conv2dConfig,
    Conv2dDRAMSliceHeight,
    Conv2dDRAMSliceWidth,
    Conv2dL1Full,
    Conv2dL1FullSliceConfig,
    Conv2dSliceConfig,
    Conv3dConfig,
    Op2DDRAMSliceHeight,
    Op2DDRAMSliceWidth,
    Op2DL1Full,
    Op2DL1FullSliceConfig,
    Op2DSliceConfig,
    PaddingMode,
)
from meshnn.ops.eltwise.bcast import BcastOpDim, BcastOpMath
from meshnn.ops.eltwise.binary_special import BinaryOpType
from meshnn.ops.eltwise.losses import LossReductionMode
from meshnn.ops.eltwise.unary_activations import SigmoidMode
from meshnn.ops.embedding import EmbeddingsType
from meshnn.ops.generic.exports import *  # noqa: F403  (generic_op's program descriptors)
from meshnn.ops.golden_functions import attach_golden_function, get_golden_function, register_python_operation
from meshnn.ops.loading import experimental, kv_cache, prim, transformer
from meshnn.ops.loading import load_catalog as _load_catalog
from meshnn.ops.matmul_config import (
    MatmulMultiCoreReuseMultiCast1DProgramConfig,
    MatmulMultiCoreReuseMultiCastBatchedDRAMShardedProgramConfig,
    MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig,
    MatmulMultiCoreReuseMultiCastProgramConfig,
    MatmulMultiCoreReuseProgramConfig,
    MinimalMatmulConfig,
)
from meshnn.ops.norm.group_norm_params import (  # ttnn's group norm helpers (host functions)
    create_group_norm_input_mask,
    create_group_norm_input_negative_mask,
    create_group_norm_reciprocals,
    create_group_norm_weight_bias_rm,
    determine_expected_group_norm_dram_grid_size,
    determine_expected_group_norm_sharded_config_and_grid_size,
    dram_group_norm_params_from_torch,
    dram_group_norm_virtual_columns,
    find_closest_largest_divisor,
    find_max_tile_span,
    get_group_norm_cores_across_channel,
)
from meshnn.ops.normalization import create_layer_norm_reciprocals  # ttnn's Welford table (host helper)
from meshnn.ops.registry import OpKind
from meshnn.ops.registry import public_ops as _public_ops
from meshnn.perf.tracy_marks import start_tracy_zone, stop_tracy_zone, tracy_frame, tracy_message
from meshnn.tensor.accessor_args import TensorAccessorArgs
from meshnn.tensor.composers import (
    ConcatMesh2dToTensor,
    ConcatMeshToTensor,
    MeshComposerConfig,
    MeshToTensor,
    concat_2d_mesh_to_tensor_composer,
    concat_mesh_to_tensor_composer,
    create_mesh_composer,
)
from meshnn.tensor.copies import (
    copy_device_to_host_tensor,
    copy_host_to_device_tensor,
    copy_host_to_device_tensor_partial,
)
from meshnn.tensor.device_queries import (
    get_allocator_base_address,
    get_optimal_dram_bank_to_logical_worker_assignment,
    get_optimal_worker_cores_for_sharded_tensor,
)
from meshnn.tensor.interop import distribute, from_torch, to_numpy, to_torch
from meshnn.tensor.legacy import (
    CppReplicateTensorToMesh,
    CppShardTensorToMesh,
    aggregate_as_tensor,
    get_device_tensor,
    get_memory_config,
)
from meshnn.tensor.lifetime import allocate_tensor_on_device, allocate_tensor_on_host, deallocate
from meshnn.tensor.mappers import (
    MeshMapperConfig,
    ReplicateTensorToMesh,
    ShardTensor2dMesh,
    ShardTensorToMesh,
    TensorToMesh,
    create_mesh_mapper,
    replicate_tensor_to_mesh_mapper,
    shard_tensor_to_2d_mesh_mapper,
    shard_tensor_to_mesh_mapper,
)
from meshnn.tensor.memory_config import (
    DRAM_MEMORY_CONFIG,
    L1_BLOCK_SHARDED_MEMORY_CONFIG,
    L1_HEIGHT_SHARDED_MEMORY_CONFIG,
    L1_MEMORY_CONFIG,
    L1_WIDTH_SHARDED_MEMORY_CONFIG,
    ShardStrategy,
    create_sharded_memory_config,
    create_sharded_memory_config_,
)
from meshnn.tensor.nd_sharding import ShardShapeAlignment
from meshnn.tensor.placement import to_device
from meshnn.tensor.printing import set_printoptions
from meshnn.tensor.queries import DEVICE_STORAGE_TYPE, has_storage_type_of, is_sharded, is_tensor_storage_on_device
from meshnn.tensor.readback import from_device
from meshnn.tensor.reshape import TileReshapeMapMode
from meshnn.tensor.shards import (
    aggregate_tensor,
    combine_device_tensors,
    distribute_tensor,
    from_host_shards,
    get_device_tensors,
)
from meshnn.tensor.spec import MemoryConfig, Shape, TensorSpec
from meshnn.tensor.storage import DistributedHostBuffer, HostBuffer, StorageType
from meshnn.tensor.tensor import Tensor
from meshnn.tensor.topology import (
    PlacementReplicate,
    PlacementShard,
    TensorTopology,
    compute_distribution_to_mesh_mapping,
)
from meshnn.tensor.visualize import visualize_mesh_device, visualize_tensor

__version__ = "0.1.0"

_arm_interrupts()  # a Ctrl-C landing in one of meshnn's finalizers is deferred, not lost (meshnn.host.interrupts)

Device = IDevice = MeshDevice  # ttnn.Device (a device is a 1x1 mesh, as in ttnn) and its interface type IDevice
CppTensorToMesh, CppMeshToTensor = TensorToMesh, MeshToTensor  # ttnn's names of the mapper / composer bases
ReplicateTensorToMeshWrapper = ReplicateTensorToMesh  # what ttnn.ReplicateTensorToMesh(...) makes
DeviceComputeKernelConfig = WormholeComputeKernelConfig  # ttnn's variant type of compute-kernel configs
GetNumPCIeDevices = get_num_pcie_devices

bfloat16 = DataType.BFLOAT16
float32 = DataType.FLOAT32
uint32 = DataType.UINT32
int32 = DataType.INT32
uint16 = DataType.UINT16
uint8 = DataType.UINT8
int8 = DataType.INT8
bfloat8_b = DataType.BFLOAT8_B
bfloat4_b = DataType.BFLOAT4_B
fp8_e4m3 = DataType.FP8_E4M3
ROW_MAJOR_LAYOUT = Layout.ROW_MAJOR
TILE_LAYOUT = Layout.TILE
TILE_SIZE = 32

_ttnn.tensor = _namespace(  # ttnn._ttnn.tensor: the tensor types under their binary module's path
    "_ttnn.tensor",
    "ttnn._ttnn.tensor: the tensor types under their binary module's path (model code annotates with them).",
    Tensor=Tensor,
    MemoryConfig=MemoryConfig,
    DataType=DataType,
    Layout=Layout,
)  # ttnn.dump_tensor / load_tensor's binary calls, read on first use:
_FILES = "meshnn.tensor.files."  # (and the overlapped tensors' file calls, tt-metal 2026)
_ttnn.tensor.lazy = dict.fromkeys(("dump_tensor_flatbuffer", "load_tensor_flatbuffer"), _FILES + "flatbuffer")
_ttnn.tensor.lazy |= dict.fromkeys(("dump_overlapped_tensors", "load_overlapped_tensors"), _FILES + "overlap")

DEFAULT_L1_SMALL_SIZE = DEFAULT_TRACE_REGION_SIZE = DEFAULT_WORKER_L1_SIZE = 0


# The ops (``ttnn.add``...) are the registry's, declared when the op catalog loads at the first op
# asked for (meshnn.ops.loading); ``ttnn.graph``, ``ttnn.tracer`` and ``ttnn.CONFIG``
# (meshnn.capture), the tensor files, memory plots and perf captures are imported at their first
# use too: most runs never use the report writer, graph capture or plots.  A report asked for
# through $TTNN_CONFIG_OVERRIDES / $TTNN_CONFIG_PATH starts at import, as in ttnn.
_LAZY, _OWN_MODULES = _lazy_exports.LAZY, _lazy_exports.OWN_MODULES


def _export_ops() -> dict[str, object]:
    """Load the op catalog and put every top-level op into this module (names imported above win:
    none is an op's)."""
    _load_catalog()
    ops = {name: op for name, op in _public_ops().items() if name not in globals()}
    globals().update(ops)
    return ops


def __getattr__(name: str) -> object:
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(f"module 'meshnn' has no attribute {name!r}")
    if name not in _LAZY:
        _export_ops()
        if name in globals():  # this thread's load put it there, or another thread's
            return globals()[name]
        raise AttributeError(f"module 'meshnn' has no attribute {name!r}")
    import importlib

    module = importlib.import_module(_LAZY[name])
    value = module if name in _OWN_MODULES else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_export_ops()})


if _os.environ.get("TTNN_CONFIG_OVERRIDES") or _os.environ.get("TTNN_CONFIG_PATH"):
    __getattr__("CONFIG")
