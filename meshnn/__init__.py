"""meshnn: TTNN's multi-device tensor runtime in Python, on a faithful simulated mesh.

``import meshnn as ttnn`` gives TTNN's names; this module only re-exports them from the layers.
"""

from meshnn.device.arch import SYSTEMS, Arch, system_spec
from meshnn.device.bank import MemoryView
from meshnn.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from meshnn.device.core import CoreCoord, CoreGrid, CoreRange, CoreRangeSet
from meshnn.errors import (
    DeallocatedError,
    DeviceClosedError,
    DistributedError,
    InvalidFreeError,
    MeshnnError,
    MeshnnTypeError,
    MeshnnValueError,
    NotImplementedByMeshnn,
    OutOfMemoryError,
    QueueError,
    TensorFileError,
    WrongMeshError,
)
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
)

__version__ = "0.1.0"

DEFAULT_L1_SMALL_SIZE = 0
DEFAULT_TRACE_REGION_SIZE = 0
DEFAULT_WORKER_L1_SIZE = 0


def get_memory_view(mesh_device: MeshDevice, buffer_type: BufferType) -> MemoryView:
    """``ttnn.get_memory_view``: the allocator state of one buffer type (the same on every device)."""
    return mesh_device.get_memory_view(buffer_type)
