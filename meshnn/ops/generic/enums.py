"""tt-metal's closed sets that program descriptors name: ``ttnn.DataMovementProcessor``,
``ttnn.NOC_MODE``, ``ttnn.CoreType``, ``ttnn.UnpackToDestMode``, ``ttnn.KernelBuildOptLevel``, a
kernel's ``SourceType``, and tt-metal's ``DataFormat`` (not bound in Python by ttnn: a circular
buffer's format is given as a ``ttnn.DataType`` and converted as tt-metal's
``datatype_to_dataformat_converter`` does).

Layer: ops.  Imports errors and formats.
"""

from __future__ import annotations

import enum

from meshnn.errors import MeshnnTypeError
from meshnn.formats.dtypes import DataType


class DataMovementProcessor(enum.IntEnum):
    """``ttnn.DataMovementProcessor``: the RISC-V a data-movement kernel runs on (RISCV_0 is BRISC,
    RISCV_1 NCRISC on Wormhole and Blackhole; RISCV_2..7 exist on Quasar only)."""

    RISCV_0 = 0
    RISCV_1 = 1
    RISCV_2 = 2
    RISCV_3 = 3
    RISCV_4 = 4
    RISCV_5 = 5
    RISCV_6 = 6
    RISCV_7 = 7


class NOC_MODE(enum.IntEnum):
    """``ttnn.NOC_MODE``: a data-movement kernel keeps its own NOC, or picks one per transfer."""

    DM_DEDICATED_NOC = 0
    DM_DYNAMIC_NOC = 1


class CoreType(enum.IntEnum):
    """``ttnn.CoreType``: the kinds of cores of a chip (UMD's list, in its order)."""

    ARC = 0
    DRAM = 1
    ACTIVE_ETH = 2
    IDLE_ETH = 3
    PCIE = 4
    TENSIX = 5
    ROUTER_ONLY = 6
    SECURITY = 7
    L2CPU = 8
    HARVESTED = 9
    ETH = 10
    WORKER = 11
    COUNT = 12


class UnpackToDestMode(enum.IntEnum):
    """``ttnn.UnpackToDestMode``: a circular buffer's unpacking straight to the destination register."""

    UnpackToDestFp32 = 0
    Default = 1


class KernelBuildOptLevel(enum.IntEnum):
    """``ttnn.KernelBuildOptLevel``: a kernel's compiler optimisation level (tt-metal's order)."""

    O1 = 0
    O2 = 1
    O3 = 2
    O0 = 3
    Os = 4
    Ofast = 5
    Oz = 6


class SourceType(enum.IntEnum):
    """``ttnn.KernelDescriptor.SourceType``: a kernel given as a file path or as its source code."""

    FILE_PATH = 0
    SOURCE_CODE = 1


class DataFormat(enum.IntEnum):
    """tt-metal's ``tt::DataFormat`` (its raw numbers: ``CBFormatDescriptor.data_format_as_uint8``)."""

    Float32 = 0
    Float16 = 1
    Bfp8 = 2
    Bfp4 = 3
    Tf32 = 4
    Float16_b = 5
    Bfp8_b = 6
    Bfp4_b = 7
    Int32 = 8
    UInt16 = 9
    Lf8 = 10
    Bfp2 = 11
    Int8 = 14
    Bfp2_b = 15
    UInt32 = 24
    Fp8_e4m3 = 26
    UInt8 = 30
    Invalid = 255


_FORMAT_OF = {
    DataType.BFLOAT16: DataFormat.Float16_b,
    DataType.FLOAT32: DataFormat.Float32,
    DataType.UINT32: DataFormat.UInt32,
    DataType.BFLOAT8_B: DataFormat.Bfp8_b,
    DataType.BFLOAT4_B: DataFormat.Bfp4_b,
    DataType.UINT8: DataFormat.UInt8,
    DataType.UINT16: DataFormat.UInt16,
    DataType.INT32: DataFormat.Int32,
    DataType.INT8: DataFormat.Int8,
    DataType.FP8_E4M3: DataFormat.Fp8_e4m3,
}
_DTYPE_OF = {fmt: dtype for dtype, fmt in _FORMAT_OF.items()}


def data_format_of(data_type: object, what: str) -> DataFormat:
    """The tt-metal format of a ``ttnn.DataType`` (``datatype_to_dataformat_converter``)."""
    if not isinstance(data_type, DataType):
        raise MeshnnTypeError(f"{what} must be a ttnn.DataType (ttnn.bfloat16...), got {data_type!r}")
    return _FORMAT_OF[data_type]


def data_type_of(data_format: DataFormat) -> DataType | None:
    """The ``ttnn.DataType`` of a tt-metal format (None for formats no ttnn dtype stores)."""
    return _DTYPE_OF.get(data_format)
