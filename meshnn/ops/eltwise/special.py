"""Special functions numpy lacks, in float64 and accurate well beyond float32 (each result is
rounded once into the output format): erf, erfinv, lgamma, digamma, polygamma, the modified Bessel
function I1 and the multivariate log-gamma.  The formulas are the textbook ones (series,
asymptotic expansions, the Lanczos approximation, Newton refinement).

May import: nothing of meshnn (numpy and the element-wise numeric functions).
"""

from __future__ import annotations

import math

import numpy as np

from meshnn.ops.eltwise.functions import erfc

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def erf(x: np.ndarray) -> np.ndarray:
    """erf in float64: its Maclaurin series for |x| < 0.5 (where 1 - erfc would cancel), else
    1 - erfc(|x|) with the sign of x."""
    z = np.asarray(x, np.float64)
    a = np.abs(z)
    small = a < 0.5
    zz = z * z
    term = z.copy()
    series = z.copy()
    for n in range(1, 12):  # |x| < 0.5: the 12th term is below 1e-17 of the first
        term = term * -zz / n
        series = series + term / (2 * n + 1)
    large = np.sign(z) * (1.0 - erfc(a))
    return np.where(small, series * _TWO_OVER_SQRT_PI, large)


def erfinv(x: np.ndarray) -> np.ndarray:
    """The inverse of erf on (-1, 1) (+-inf at +-1, NaN outside): a first guess from the central
    and tail rational forms, then three Newton steps on erf in float64."""
    z = np.asarray(x, np.float64)
    inside = np.abs(z) < 1
    t = np.where(inside, z, 0.0)
    w = -np.log((1.0 - t) * (1.0 + t))
    # Central region: erfinv(x) ~ x sqrt(pi)/2 (1 + pi x^2 / 12 + 7 pi^2 x^4 / 480 ...); tails:
    # sqrt(w - log w) scaled, both good to a few per cent, which Newton's method then polishes.
    central = t * math.sqrt(math.pi) / 2 * (1 + math.pi * t * t / 12 + 7 * math.pi**2 * t**4 / 480)
    tail = np.sign(t) * np.sqrt(np.maximum(w - np.log(np.maximum(w, 1e-300)), 0.0))
    y = np.where(np.abs(t) < 0.7, central, tail)
    for _ in range(5):
        y = y - (erf(y) - t) / (_TWO_OVER_SQRT_PI * np.exp(-y * y))
    result = np.where(inside, y, np.nan)
    result = np.where(z == 1, np.inf, result)
    return np.where(z == -1, -np.inf, result)


_LANCZOS_G = 7.0
_LANCZOS = (
    0.99999999999980993,
    676.5203681218851,
    -1259.1392167224028,
    771.32342877765313,
    -176.61502916214059,
    12.507343278686905,
    -0.13857109526572012,
    9.9843695780195716e-6,
    1.5056327351493116e-7,
)


def _lgamma_right(z: np.ndarray) -> np.ndarray:
    """log|Gamma(z)| for z >= 0.5 (Lanczos, g = 7, n = 9)."""
    z = z - 1.0
    a = np.full_like(z, _LANCZOS[0])
    for k, c in enumerate(_LANCZOS[1:], start=1):
        a = a + c / (z + k)
    t = z + _LANCZOS_G + 0.5
    return 0.5 * math.log(2 * math.pi) + (z + 0.5) * np.log(t) - t + np.log(a)


def lgamma(x: np.ndarray) -> np.ndarray:
    """log|Gamma(x)| in float64 (+inf at the poles 0, -1, -2, ...), by reflection below 0.5."""
    z = np.asarray(x, np.float64)
    right = z >= 0.5
    safe = np.where(right, z, 1.0 - z)
    value = _lgamma_right(safe)
    sin = np.abs(np.sin(math.pi * np.where(right, 0.5, z)))
    with np.errstate(divide="ignore"):
        left = np.log(math.pi / sin) - value
    out = np.where(right, value, left)
    return np.where((z <= 0) & (z == np.floor(z)), np.inf, out)


def digamma(x: np.ndarray) -> np.ndarray:
    """psi(x) = d/dx log Gamma(x) in float64: shifted up past 6 by psi(x) = psi(x + 1) - 1/x, then
    its asymptotic series; reflection psi(1 - x) - pi cot(pi x) below 0; NaN at the poles."""
    z = np.asarray(x, np.float64)
    negative = z < 0
    y = np.where(negative, 1.0 - z, z)
    shift = np.zeros_like(y)
    for _ in range(6):
        small = y < 6
        shift = shift - np.where(small, 1.0 / np.where(small, y, 1.0), 0.0)
        y = np.where(small, y + 1.0, y)
    inv2 = 1.0 / (y * y)
    series = np.log(y) - 0.5 / y - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240))))
    value = series + shift
    with np.errstate(divide="ignore", invalid="ignore"):
        reflected = value - math.pi / np.tan(math.pi * z)
    out = np.where(negative, reflected, value)
    return np.where((z <= 0) & (z == np.floor(z)), np.nan, out)


_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)  # B2, B4, ... B14


def polygamma(n: int, x: np.ndarray) -> np.ndarray:
    """The n-th derivative of digamma (n >= 1) in float64: shifted up past 15 by its recurrence,
    then its asymptotic series; n = 0 is digamma."""
    if n == 0:
        return digamma(x)
    z = np.asarray(x, np.float64)
    sign = (-1.0) ** (n + 1)
    y = z.copy()
    total = np.zeros_like(z)
    for _ in range(15):
        small = y < 15
        total = total + np.where(small, 1.0 / np.where(small, y, 1.0) ** (n + 1), 0.0)
        y = np.where(small, y + 1.0, y)
    fact = math.factorial(n)
    tail = math.factorial(n - 1) / y**n + fact / (2 * y ** (n + 1))
    for k, b in enumerate(_BERNOULLI, start=1):
        tail = tail + b * math.factorial(2 * k + n - 1) / (math.factorial(2 * k) * y ** (2 * k + n))
    return sign * (fact * total + tail)


def i1(x: np.ndarray) -> np.ndarray:
    """The modified Bessel function of the first kind, order 1, in float64: its power series
    (converges for every x; enough terms for |x| <= 40, beyond which it overflows float32)."""
    z = np.asarray(x, np.float64)
    half = z / 2
    term = half.copy()
    total = half.copy()
    q = half * half
    for k in range(1, 80):
        term = term * q / (k * (k + 1))
        total = total + term
    return total


def multigammaln(x: np.ndarray, p: int = 4) -> np.ndarray:
    """The multivariate log-gamma of dimension ``p`` (ttnn's has p = 4)."""
    z = np.asarray(x, np.float64)
    total = np.full_like(z, p * (p - 1) / 4 * math.log(math.pi))
    for j in range(1, p + 1):
        total = total + lgamma(z + (1 - j) / 2)
    return total
