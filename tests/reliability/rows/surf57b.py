"""Bad calls found by stop 57's sample of tt-metal's model tests: sizes and dims given as one-element
torch tensors are ints only when the tensor is an integer one (a float or bool tensor, or one of two
elements, is refused as ttnn's bindings refuse it); a model whose parameters have no ttnn dtype."""

from __future__ import annotations

import torch

import meshnn as ttnn

from ..cases import TYPE, Case


class _ComplexParameter(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.p = torch.nn.Parameter(torch.zeros(2, dtype=torch.complex64), requires_grad=False)


def _preprocess(model):
    from meshnn.testing.model_preprocessing import preprocess_model_parameters

    return preprocess_model_parameters(initialize_model=lambda: model)


def rows() -> list[Case]:
    return [
        Case(
            "split", "a float tensor size", lambda e: ttnn.split(e.a, [torch.tensor(20.0), 20], 2), TYPE, "split_size"
        ),
        Case(
            "split",
            "a size of two elements",
            lambda e: ttnn.split(e.a, [torch.tensor([20, 20])], 2),
            TYPE,
            "split_size",
        ),
        Case("reshape", "a bool tensor dim", lambda e: ttnn.reshape(e.a, (1, torch.tensor(True), 120)), TYPE, "shape"),
        Case("Tensor.reshape", "a float tensor dim", lambda e: e.a.reshape([1, 3, torch.tensor(40.0)]), TYPE, "shape"),
        Case(
            "model_preprocessing.preprocess_model_parameters",
            "a complex64 parameter",
            lambda e: _preprocess(_ComplexParameter()),
            TYPE,
            "complex64",
        ),
    ]
