"""The time of a whole step (a decode token, a prefill) and what it is made of: the device's kernels,
the gaps between them (eager: the host dispatching each op; traced: the replay's gap), and the host's
own work per step outside any op.

A model served by tt-metal spends part of every token on the host, whatever its device does: its
Python loop, the trace's enqueue, copying the next token and positions to the device, reading the
logits back from every device and sampling them (tt_transformers' demo and generator).  That work is
modelled as one figure per step (:class:`HostModel`), stated and fitted to published model-level
figures of small models, and shown apart from the device's time, never folded into it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from meshnn.errors import MeshnnValueError
from meshnn.perf.recorder import Recorder

PERF_MD = "tt-metal: models/tt_transformers/PERF.md, performance table (batch 1, 128-token prompts, 200 tokens)"


@dataclass(frozen=True, slots=True)
class HostModel:
    """The host's work per step, outside the ops (ns): ``decode_step_ns`` per decode token,
    ``prefill_ns`` per prompt (its inputs prepared and sent, the last token's logits read and sampled).
    ``layer_residual_ns``: NOT host work: device time per decoder layer that the model does not
    account for, fitted where published figures show it (0 where they do not); shown apart.
    ``host_logit_ns``: the host's work per logit of a batch whose logits are read back and argmaxed on the host
    (the demo's float conversion, slice and ``torch.argmax``; the read itself is timed apart), net of the batch-1
    step's on-device argmax that ``decode_step_ns`` holds; 0 where no such figure was fitted."""

    decode_step_ns: float
    prefill_ns: float
    layer_residual_ns: float = 0.0
    host_logit_ns: float = 0.0
    sources: dict[str, str] = field(default_factory=dict, compare=False)


HOST_LOGIT_SOURCE = (
    "fitted: tt-metal models/demos/llama3/PERF.md (e27c83a76f, 2025-02-20), Short-Context Batch-32 table: "
    "Llama-3.2-1B on N150, N300 and T3K (54.7, 64.2, 69.9 t/s/u), published time per step less meshnn's predicted "
    "step (traced device time, decode_step_ns, the 32 rows' read back: benchmarks/perf_model.py), averaged "
    "(4.75 ms), over the 32 x 128,256 logits the host argmaxes (1.158 ns a logit); the 3B, 8B and 70B rows of the "
    "table are checks.  What it stands for: simple_text_demo.py's sample_host at batch > 1 (argmax_on_device held "
    "at batch 1 only until #25510): model.process_output_decode's ttnn.to_torch of device 0's logits, .float() "
    "and the vocabulary slice, then torch.argmax over each user's row, where the batch-1 rows the host's per-token "
    "figure was fitted to argmaxed on the device (its time, in that figure, comes off this one)"
)
TT_TRANSFORMERS = HostModel(
    decode_step_ns=4_470_000.0,
    prefill_ns=5_750_000.0,
    host_logit_ns=1.158,
    sources={
        "decode_step_ns": f"fitted: {PERF_MD}: Llama-3.2-1B and 3B on N150, N300 and T3K, published time per token "
        "less meshnn's predicted traced device time (benchmarks/perf_model.py), averaged; the 8B and 70B rows are "
        "checks (4.96 -> 4.79 ms when benchmarks/tt_llama.py's FF2 became tt_transformers' bfloat8_b at HiFi2, the "
        "single-use weight tile's cycles kept; 4.79 -> 4.47 ms, refitted with the single-use weight tile's cycles, "
        "40 -> 36, when the decode matmuls' partial sums between K blocks were timed).  What it stands for: "
        "the demo's loop per token (trace enqueue, "
        "token and position copies to the device, every device's logits read back and sampled on the host: the "
        "same 128256-wide vocabulary for "
        "every model, hence one figure)",
        "prefill_ns": f"fitted: {PERF_MD}: the same rows' time to first token less meshnn's predicted eager "
        "prefill of 128 tokens, averaged (refitted when the 2-D programs' in1 senders joined the model: "
        "10.94 -> 8.74 ms; again when the senders' DRAM reads were timed per tile and FF2 became bfloat8_b at "
        "HiFi2: 8.74 -> 4.69 ms; again, with ArchPerf.host_dispatch_per_device_ns and least squares over the six "
        "rows, when the host's dispatch ran ahead of the device (meshnn.perf.recorder): 4.69 -> 5.90 ms; and "
        "when the prefill head ops read their tiles one at a time (meshnn.perf.heads): 5.90 -> 5.75 ms; what it "
        "stands for: the prompt's preparation and upload, the last logits read back and sampled, the demo's "
        "bookkeeping around the first token)",
        "layer_residual_ns": "0: the 1-D systems' published figures leave no per-layer residual",
        "host_logit_ns": HOST_LOGIT_SOURCE,
    },
)
"""tt_transformers' demo on a Wormhole host with a 1-D mesh (N150, N300, T3000)."""

TT_TRANSFORMERS_TG = HostModel(
    decode_step_ns=6_540_000.0,
    prefill_ns=4_690_000.0,
    layer_residual_ns=516_000.0,
    sources={
        "decode_step_ns": f"fitted with layer_residual_ns: {PERF_MD}: Llama-3.2-1B (16 layers) and 3B (28 layers) on "
        "TG, published time per token less meshnn's predicted traced device time, as a + b x layers; the 8B and "
        "70B TG rows are checks",
        "prefill_ns": "the 1-D systems' figure (PERF.md has no TG time to first token)",
        "layer_residual_ns": "fitted (see decode_step_ns): 0.52 ms a decoder layer that tt_transformers' TG path "
        "spends and the model does not explain; candidates: its collectives on a 2-D mesh (about 8 a layer), "
        "its user-selection and slice matmuls; not host work",
        "host_logit_ns": "0: no Galaxy row samples a batch on the host",
    },
)
"""tt_transformers' demo on a Wormhole Galaxy (8x4)."""


@dataclass(frozen=True, slots=True)
class StepTime:
    """One step's predicted time (ns), split as it is spent: ``kernel_ns`` on the slowest device's
    kernels, ``gap_ns`` between them, ``host_ns`` on the host outside the ops."""

    kernel_ns: float
    gap_ns: float
    host_ns: float
    traced: bool
    ops: int
    host_bound_ops: int  # eager ops that waited on the host's dispatch (their devices were free first)
    residual_ns: float = 0.0  # fitted, not modelled: HostModel.layer_residual_ns x layers

    @property
    def device_ns(self) -> float:
        return self.kernel_ns + self.gap_ns

    @property
    def total_ns(self) -> float:
        return self.kernel_ns + self.gap_ns + self.host_ns + self.residual_ns

    def statement(self) -> str:
        """What the figure includes, in words (printed beside it)."""
        mode = "traced: the replay's gap before each op" if self.traced else "eager: each op dispatched by the host"
        text = (
            f"{self.ops} ops: device kernels {self.kernel_ns / 1e6:.2f} ms + op-to-op gaps {self.gap_ns / 1e6:.2f} ms "
            f"({mode}) + host work per step {self.host_ns / 1e6:.2f} ms"
        )
        if self.residual_ns:
            text += f" + an unmodelled residual fitted per layer {self.residual_ns / 1e6:.2f} ms"
        text += f" = {self.total_ns / 1e6:.2f} ms"
        if not self.traced and self.host_bound_ops:
            text += (
                f"; {self.host_bound_ops} of {self.ops} ops wait on the host's dispatch (the kernels before them did "
                "not hide it)"
            )
            if self.host_bound_ops * 2 > self.ops:
                text += ": eager, this step is dispatch-bound and nearly the same at any batch or position"
        return text


def step_time(recorder: Recorder, *, traced: bool, host_ns: float = 0.0, residual_ns: float = 0.0) -> StepTime:
    """The step ``recorder`` holds, re-timed all traced (or all eager), plus ``host_ns`` of host work
    (and a fitted ``residual_ns``, kept apart): its slowest device's kernels and gaps."""
    if not recorder.records:
        raise MeshnnValueError("step_time: the recorder holds no ops")
    timed = recorder.retimed(traced=traced)
    slowest = max(timed.totals(), key=lambda t: t.total_ns)
    floor = timed.machine.system.arch.op_to_op_traced_ns
    bound = 0 if traced else sum(1 for r in timed.records if r.prediction.gap_ns > floor)
    return StepTime(slowest.kernel_ns, slowest.gap_ns, host_ns, traced, slowest.ops, bound, residual_ns)
