"""What a whole-model prediction is made of, for reading a miss against its published figure.

:func:`breakdown` takes a step's recorder (a decode step or a prefill, as :mod:`perf_model` records them) and
returns, on the slowest device: the kernel time of each op family (ms), the matmuls split by their per-device
weight (K x N: which projection it is), and the op-to-op gaps both eager and traced, so that a row can be read
as kernels + gaps + the host's per-step figure.  :func:`print_misses` prints that for every row outside 15%
with what the published figure leaves for the device (published total - host - the model's gaps) beside the
model's kernels: how much more (or less) device time the figure implies than the model holds.
"""

from __future__ import annotations

from collections import defaultdict

from meshnn.perf.desc import OpFamily
from meshnn.perf.recorder import Recorder

WITHIN = 0.15
"""The acceptance bound of issue 31: a prediction within 15% of its published figure."""


def breakdown(recorder: Recorder, *, traced: bool) -> dict[str, object]:
    """The step in ``recorder`` timed ``traced`` (or eager): kernel ms by op family and by matmul weight on its
    slowest device, and the step's gaps eager and traced (ms)."""
    timed = recorder.retimed(traced=traced)
    slowest = max(timed.totals(), key=lambda t: t.total_ns).device
    families: dict[str, float] = defaultdict(float)
    matmuls: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for record in timed.records:
        if slowest not in record.devices:
            continue
        kernel = record.prediction.kernel_ns / 1e6
        families[record.desc.family.name] += kernel
        if record.desc.family is OpFamily.MATMUL and len(record.desc.inputs) > 1:
            weight = record.desc.inputs[1]
            key = f"{weight.shape[-2]}x{weight.shape[-1]} {weight.dtype}"
            matmuls[key][0] += 1
            matmuls[key][1] += kernel
    gaps = {}
    for mode in (False, True):
        again = recorder.retimed(traced=mode)
        gaps["traced" if mode else "eager"] = max(again.totals(), key=lambda t: t.total_ns).gap_ns / 1e6
    return {
        "families": dict(sorted(families.items(), key=lambda kv: -kv[1])),
        "matmuls": dict(sorted(((k, (int(c), t)) for k, (c, t) in matmuls.items()), key=lambda kv: -kv[1][1])),
        "gaps": gaps,
    }


def compact(parts: dict[str, object]) -> str:
    """``breakdown``'s result in one CSV cell: ``FAMILY=ms;...|gaps eager/traced``."""
    families = ";".join(f"{name}={ms:.2f}" for name, ms in parts["families"].items())
    gaps = parts["gaps"]
    return f"{families}|gaps eager {gaps['eager']:.2f} traced {gaps['traced']:.2f}"


def print_misses(rows: list[dict]) -> None:
    """Every checked row outside :data:`WITHIN`, split: kernels by family and matmul weight, gaps eager /
    traced, the host's figure, and the device time its published figure implies."""
    misses = [r for r in rows if r["error"] is not None and abs(r["error"]) > WITHIN and r["role"].startswith("check")]
    if not misses:
        return
    print(f"    the misses ({len(misses)} rows outside {WITHIN:.0%}), split (ms, slowest device):")
    for row in misses:
        parts = row["parts"]
        published_ms = 1e3 / row["published"] if row["unit"] == "tokens/s/user" else row["published"]
        implied = published_ms - row["host_ms"] - row["residual_ms"] - row["gap_ms"]
        print(
            f"    {row['model']} {row['system']} {row['precision']} {row['phase']}: {100 * row['error']:+.1f}%; "
            f"published {published_ms:.2f} ms a step leaves {implied:.2f} ms of kernels where the model holds "
            f"{row['kernel_ms']:.2f} ({implied / row['kernel_ms']:.2f}x); gaps eager {parts['gaps']['eager']:.2f} / "
            f"traced {parts['gaps']['traced']:.2f}; host {row['host_ms']:.2f}"
        )
        families = ", ".join(f"{name} {ms:.2f}" for name, ms in parts["families"].items() if ms >= 0.05)
        print(f"        kernels by family: {families}")
        top = list(parts["matmuls"].items())[:6]
        print("        matmuls by weight: " + ", ".join(f"{k} x{c} {t:.2f}" for k, (c, t) in top))
