"""``ttnn.ComplexTensor``: a complex tensor as ttnn holds one, a pair of real tensors of one shape
(its real and imaginary parts), on the host or on a mesh.  The complex ops
(:mod:`meshnn.ops.complex.ops`) and the backward ops' complex overloads take and return them.

May import: :mod:`meshnn.errors` and :mod:`meshnn.tensor`.
"""

from __future__ import annotations

from collections.abc import Iterator

from meshnn.errors import MeshnnTypeError, MeshnnValueError
from meshnn.tensor.tensor import Tensor


class ComplexTensor:
    """``ttnn.ComplexTensor((real, imag))``: the parts are ttnn Tensors of the same shape; ``[0]``
    is the real part, ``[1]`` the imaginary one.  The parts are the tensors given (not copies)."""

    __slots__ = ("_parts",)

    def __init__(self, real_imag: tuple[Tensor, Tensor]) -> None:
        if not isinstance(real_imag, tuple | list) or len(real_imag) != 2:
            raise MeshnnTypeError(f"ttnn.ComplexTensor takes a (real, imag) pair of tensors, got {real_imag!r:.80}")
        real, imag = real_imag
        for name, part in (("real", real), ("imag", imag)):
            if not isinstance(part, Tensor):
                raise MeshnnTypeError(f"ttnn.ComplexTensor: {name} must be a ttnn.Tensor, got {type(part).__name__}")
        if tuple(real.shape) != tuple(imag.shape):
            raise MeshnnValueError(
                f"ttnn.ComplexTensor: real {list(real.shape)} and imag {list(imag.shape)} must have one shape"
            )
        self._parts = (real, imag)

    @property
    def real(self) -> Tensor:
        """The real part."""
        return self._parts[0]

    @property
    def imag(self) -> Tensor:
        """The imaginary part."""
        return self._parts[1]

    def __getitem__(self, index: int) -> Tensor:
        if isinstance(index, bool) or not isinstance(index, int) or index not in (0, 1, -1, -2):
            raise MeshnnValueError(f"ttnn.ComplexTensor: index must be 0 (real) or 1 (imag), got {index!r}")
        return self._parts[index]

    def __iter__(self) -> Iterator[Tensor]:
        return iter(self._parts)

    def __len__(self) -> int:
        return 2

    def deallocate(self) -> None:
        """Free both parts' device buffers (a no-op for host parts)."""
        for part in self._parts:
            part.deallocate()

    @property
    def shape(self):
        """The parts' shape."""
        return self._parts[0].shape

    def __repr__(self) -> str:
        return f"ttnn.ComplexTensor(shape={list(self.shape)}, dtype={self._parts[0].dtype})"
