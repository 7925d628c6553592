"""The names of ``ttnn.generic_op``'s program descriptors that ``meshnn`` exports at its top level
(``import meshnn as ttnn; ttnn.ProgramDescriptor``): re-exports only.

Layer: ops.
"""

from meshnn.ops.generic.cb_desc import (
    CBDescriptor,
    CBFormatDescriptor,
    FaceGeometry,
    SemaphoreDescriptor,
    TileDescriptor,
    cb_descriptor_from_sharded_tensor,
    get_cb_address,
)
from meshnn.ops.generic.enums import NOC_MODE, CoreType, DataMovementProcessor, KernelBuildOptLevel, UnpackToDestMode
from meshnn.ops.generic.kernel_desc import (
    ComputeConfigDescriptor,
    DataMovementConfigDescriptor,
    KernelDescriptor,
    ReaderConfigDescriptor,
    WriterConfigDescriptor,
)
from meshnn.ops.generic.program_desc import (
    MeshProgramDescriptor,
    ProgramDescriptor,
    compute_program_descriptor_hash,
    merge_program_descriptors,
)
from meshnn.ops.generic.runtime_args import RuntimeArgs

__all__ = [
    "NOC_MODE",
    "CBDescriptor",
    "CBFormatDescriptor",
    "ComputeConfigDescriptor",
    "CoreType",
    "DataMovementConfigDescriptor",
    "DataMovementProcessor",
    "FaceGeometry",
    "KernelBuildOptLevel",
    "KernelDescriptor",
    "MeshProgramDescriptor",
    "ProgramDescriptor",
    "ReaderConfigDescriptor",
    "RuntimeArgs",
    "SemaphoreDescriptor",
    "TileDescriptor",
    "UnpackToDestMode",
    "WriterConfigDescriptor",
    "cb_descriptor_from_sharded_tensor",
    "compute_program_descriptor_hash",
    "get_cb_address",
    "merge_program_descriptors",
]
