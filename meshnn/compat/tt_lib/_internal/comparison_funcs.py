"""``tt_lib._internal.comparison_funcs`` (linked into tt-metal's tests as
``tests.tt_eager.python_api_testing.sweep_tests.comparison_funcs``): comparisons of a golden torch tensor
with a computed one, each returning ``(passed, message)``; the message gives the largest absolute and
relative differences and the PCC.

The PCC's rules are tt-metal's: 1.0 when both are all NaN, 0.0 when only one is all NaN or only one is
all zero; otherwise NaN and +-inf are set to 0 in both, and then equal tensors give 1.0, a single element
1.0 or 0.0 by equality, two constant tensors whether their constants are close, anything else the
Pearson correlation of the flattened values (1.0 when undefined)."""

from __future__ import annotations

import logging

import numpy as np
import torch

LOG = logging.getLogger(__name__)


def _finite_or_zero(x: torch.Tensor) -> torch.Tensor:
    return torch.where(torch.isfinite(x), x, torch.zeros((), dtype=x.dtype))


def _pcc(golden: torch.Tensor, calculated: torch.Tensor) -> float:
    golden_nan, calculated_nan = bool(torch.isnan(golden).all()), bool(torch.isnan(calculated).all())
    if golden_nan and calculated_nan:
        LOG.warning("Both tensors are 'nan'")
        return 1.0
    if golden_nan or calculated_nan:
        LOG.error("One tensor is all nan, the other is not.")
        return 0.0
    if bool(golden.bool().any()) != bool(calculated.bool().any()):
        LOG.warning("One tensor is all zero")
        return 0.0
    golden, calculated = _finite_or_zero(golden), _finite_or_zero(calculated)
    if torch.equal(golden, calculated):
        return 1.0
    if torch.bfloat16 in (golden.dtype, calculated.dtype):  # numpy has no bfloat16
        golden, calculated = golden.to(torch.float32), calculated.to(torch.float32)
    if golden.numel() == 1:
        return float(torch.equal(golden, calculated))
    if golden.max() == golden.min() and calculated.max() == calculated.min():
        return bool(torch.isclose(golden.max(), calculated.max()))
    matrix = np.ma.corrcoef(
        np.ma.masked_invalid(golden.detach().numpy().reshape(-1)),
        np.ma.masked_invalid(calculated.detach().numpy().reshape(-1)),
    )
    value = matrix[0, 1]
    return 1.0 if value is np.ma.masked else float(value)


def get_atol_rtol_pcc(golden: torch.Tensor, calculated: torch.Tensor) -> tuple[float, float, float, str]:
    """The largest ``|golden - calculated|``, the largest ``|golden - calculated| / |calculated|``, the
    PCC (module docstring), and a message stating the three.  Complex tensors compare as their real and
    imaginary parts; two integer tensors as float32."""
    if golden.is_complex() and calculated.is_complex():
        golden, calculated = torch.view_as_real(golden), torch.view_as_real(calculated)
    if not (golden.is_floating_point() or calculated.is_floating_point()):
        golden, calculated = golden.to(torch.float32), calculated.to(torch.float32)
    delta = torch.abs(golden - calculated)
    atol = torch.max(delta).item()
    rtol = torch.max(delta / torch.abs(calculated)).item()
    pcc = _pcc(golden, calculated)
    return atol, rtol, pcc, f"Max ATOL Delta: {atol}, Max RTOL Delta: {rtol}, PCC: {pcc}"


def _like(golden: torch.Tensor, calculated: torch.Tensor) -> torch.Tensor:
    return calculated if calculated.dtype == golden.dtype else calculated.type(golden.dtype)


def comp_equal(golden: torch.Tensor, calculated: torch.Tensor) -> tuple[bool, str]:
    """Exact equality (``calculated`` cast to ``golden``'s dtype; ``golden`` given leading dims of 1 up
    to ``calculated``'s rank)."""
    calculated = _like(golden, calculated)
    while golden.dim() < calculated.dim():
        golden = golden.unsqueeze(0)
    message = get_atol_rtol_pcc(golden, calculated)[3]
    equal = torch.equal(golden, calculated)
    return equal, message if equal else message + ", Equal check failed"


def comp_shape(golden: torch.Tensor, calculated: torch.Tensor) -> tuple[bool, str]:
    """Whether the shapes are the same."""
    return golden.shape == calculated.shape, "compare shape"


def comp_allclose(golden, calculated, rtol=1e-05, atol=1e-08) -> tuple[bool, str]:
    """``torch.allclose`` (NaNs equal) after casting ``calculated`` to ``golden``'s dtype."""
    calculated = _like(golden, calculated)
    message = get_atol_rtol_pcc(golden, calculated)[3]
    passed = torch.allclose(golden, calculated, rtol, atol, True)
    return passed, message if passed else message + ", Allclose check failed"


def comp_pcc(golden, calculated, pcc=0.99) -> tuple[bool, str]:
    """Whether the PCC is at least ``pcc``."""
    calculated = _like(golden, calculated)
    _, _, value, message = get_atol_rtol_pcc(golden, calculated)
    return value >= pcc, message if value >= pcc else message + ", PCC check failed"


def comp_and_get_pcc(golden, calculated, pcc=0.99) -> tuple[bool, str, float]:
    """:func:`comp_pcc`'s result and the PCC itself."""
    calculated = _like(golden, calculated)
    _, _, value, message = get_atol_rtol_pcc(golden, calculated)
    passed = value >= pcc
    return passed, message if passed else message + f", PCC check failed (target: {pcc})", value


def comp_pcc_list(golden, calculated, pcc=0.99) -> tuple[bool, str]:
    """Whether every pair's PCC is at least ``pcc``."""
    texts, lowest = [], 1.0
    for i, (want, got) in enumerate(zip(golden, calculated, strict=False)):
        _, _, value, message = get_atol_rtol_pcc(want, _like(want, got))
        texts.append(f"Tensor {i}: {message} ")
        lowest = min(lowest, value)
    text = "".join(texts)
    return lowest >= pcc, text if lowest >= pcc else text + ", PCC check failed"


def comp_equal_list(golden, calculated) -> tuple[bool, str]:
    """Whether every pair is exactly equal."""
    texts, equal = [], True
    for i, (want, got) in enumerate(zip(golden, calculated, strict=False)):
        got = _like(want, got)
        texts.append(f"Tensor {i}: {get_atol_rtol_pcc(want, got)[3]}")
        equal = torch.equal(want, got) and equal
    text = "".join(texts)
    return equal, text if equal else text + ", PCC check failed"


def comp_allclose_and_pcc(golden, calculated, rtol=1e-05, atol=1e-08, pcc=0.99) -> tuple[bool, str]:
    """Both :func:`comp_allclose` and :func:`comp_pcc`."""
    calculated = _like(golden, calculated)
    _, _, value, message = get_atol_rtol_pcc(golden, calculated)
    close = torch.allclose(golden, calculated, rtol, atol, True)
    message += "" if close else ", Allclose check failed"
    message += "" if value >= pcc else ", PCC check failed"
    return bool(close and value >= pcc), message


def comp_topk_similarity(golden, calculated) -> tuple[bool, str]:
    """Top-k: the values by :func:`comp_pcc`; the values gathered at the computed indices
    (``calculated[1]``) by their mean cosine similarity with the golden values over the last dim,
    which must exceed 0.99."""
    passed, message = comp_pcc(golden[0], calculated[0])
    cosine = torch.nn.functional.cosine_similarity(golden[0], calculated[1], dim=-1).mean()
    message += f", Cosine similarity: {cosine.item()}"
    close = bool(cosine > 0.99)
    return passed and close, message if close else message + ", Cosine similarity check failed"
