"""Math fidelity (``ttnn.MathFidelity``) and ttnn's default fidelity for each op family.

The matrix engine multiplies 5-bit by 7-bit mantissa slices; a fidelity is the number of passes it
makes over the operands' mantissas (LoFi one, HiFi4 all four), so a tile multiply costs one pass
of cycles per phase [tt-metal: tech_reports/matrix_engine/matrix_engine.md].  The public name
``ttnn.MathFidelity`` re-exports this enum.
"""

from __future__ import annotations

import enum

from meshnn.errors import MeshnnTypeError, MeshnnValueError


class MathFidelity(enum.Enum):
    """``ttnn.MathFidelity``, numbered as tt-metal numbers it (``MathFidelity : uint8_t``)."""

    LoFi = 0
    HiFi2 = 2
    HiFi3 = 3
    HiFi4 = 4

    def __str__(self) -> str:
        return f"MathFidelity.{self.name}"

    @property
    def phases(self) -> int:
        """Passes of the matrix engine over one pair of tiles (LoFi 1 ... HiFi4 4)."""
        return 1 if self is MathFidelity.LoFi else self.value

    @classmethod
    def parse(cls, value: object) -> MathFidelity:
        """A fidelity from itself or its name (``"HiFi2"``, ``"MathFidelity.HiFi2"``, any case)."""
        if isinstance(value, MathFidelity):
            return value
        if not isinstance(value, str):
            raise MeshnnTypeError(f"math fidelity must be a MathFidelity or its name, got {value!r}")
        name = value.rsplit(".", 1)[-1].lower()
        for member in cls:
            if member.name.lower() == name:
                return member
        known = ", ".join(m.name for m in cls)
        raise MeshnnValueError(f"unknown math fidelity {value!r}; known: {known}")


GENERIC_DEFAULT = MathFidelity.LoFi
"""``init_device_compute_kernel_config``'s own default fidelity, used by every op that passes none
[tt-metal: ttnn/.../compute_kernel/compute_kernel_config.hpp, ``default_fidelity = MathFidelity::LoFi``]."""

NORM_DEFAULT = MathFidelity.HiFi4
"""layer_norm / rms_norm pass HiFi4 [tt-metal: layernorm.cpp, ``init_device_compute_kernel_config(
arch, compute_kernel_config, MathFidelity::HiFi4, true, false, false)``]."""

ROTARY_DEFAULT = MathFidelity.HiFi4
"""the rotary embeddings (rotary_embedding, rotary_embedding_llama, its fused_qk and DeepSeek's indexed forms)
pass HiFi4
[tt-metal: rotary_embedding*.cpp, ``init_device_compute_kernel_config(arch, compute_kernel_config,
MathFidelity::HiFi4, true, false, false)``]."""

ROTARY_OP_CODES = frozenset(
    {
        "RotaryEmbeddingDeviceOperation",
        "RotaryEmbeddingLlamaDeviceOperation",
        "RotaryEmbeddingLlamaFusedQKDeviceOperation",
        "RotaryEmbeddingIndexedDeviceOperation",  # DeepSeek's prefill form: rotary_embedding_llama's program
    }
)
"""The profiler's op codes of the ops ROTARY_DEFAULT is for."""

SDPA_DEFAULT = MathFidelity.HiFi2
"""scaled_dot_product_attention passes HiFi2 [tt-metal: sdpa.cpp / ring_joint_sdpa.cpp,
``MathFidelity::HiFi2, true, false, false``]."""


def default_matmul_fidelity(*, has_program_config: bool, has_core_grid: bool) -> MathFidelity:
    """ttnn's matmul default: HiFi2 when the caller gave neither a program config nor a core grid,
    LoFi otherwise [tt-metal: ttnn/.../matmul/device/matmul_op.cpp ``create_matmul_struct``:
    ``increase_fidelity = !has_program_config && !has_user_grid``]."""
    return MathFidelity.LoFi if (has_program_config or has_core_grid) else MathFidelity.HiFi2
