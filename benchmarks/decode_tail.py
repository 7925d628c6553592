"""What a tt_transformers decode step did at the date of the figure it is checked on, beyond its ops as
:mod:`tt_llama` writes them: the decode SDPA's chunk size, and the host's read of the logits where the demo
sampled a batch on the host (``perf_model.predicted`` takes both).

- The decode SDPA's q / k chunks (model_config.py's ``SDPA_DECODE_PROGCFG``): 256 positions from the
  llama3 code base's move to tt_transformers (2025-03) on; 128 on Blackhole from tt-metal #21993 (2025-05-13,
  "Add P100 support": ``128 if is_blackhole() else 256``); 0 since #33978 (2026-01-06, "dynamic chunk sizes
  in SDPA decode"), which lets the op pick the chunk from the position (``meshnn.perf.decode_ops.dynamic_chunk``:
  256 at a 128-token prompt's position 228, so the Wormhole rows there do not move; 512 at 64K).
- The logits read back: where the demo sampled on the host above batch 1 (``argmax_on_device`` only at batch 1
  until tt-metal #25510 of 2025-07-23, "Activate multicore argmax for batch=32"; the prefetcher's and the host
  sampling list's runs since), each decode step ends in ``process_output_decode``: ``ttnn.to_torch`` of device
  0's all-gathered, untilized logits, ``[1, 1, 32, vocab]`` bfloat16 row-major (a page a row), whatever the
  mesh.  The read is timed by :func:`meshnn.perf.transfer.host_read_ns` (fitted to tt-metal's rw_buffer
  goldens, not to these rows) and added to the host's per-step figure, which was fitted on batch-1 rows that
  argmax on the device and read back a token.  The host's ``.float()``, slice and ``torch.argmax`` of the 32 rows
  are timed by :func:`host_argmax_ns` (``meshnn.perf.host.HostModel.host_logit_ns`` a logit, fitted to PERF.md's
  batch-32 rows of Llama-3.2-1B: see :data:`HOST_SAMPLING`).
"""

from __future__ import annotations

import math

from meshnn.perf.host import HostModel
from meshnn.perf.transfer import host_read_ns

TILE = 32
SDPA_DECODE_CHUNK = {"wormhole_b0": 256, "blackhole": 128}
"""SDPA_DECODE_PROGCFG's q / k chunk by architecture, 2025-05-13 to 2026-01-06 (Wormhole's also before)."""
DYNAMIC_DECODE_CHUNK_ROWS = ("Ministral-8B", "QwQ-32B")
"""PERF.md's rows measured after tt-metal #33978 (2026-01-06): Ministral-8B (2026-01-24), QwQ-32B (2026-03-23);
model_targets.yaml's figures (2026-06) likewise."""
HOST_SAMPLING = (
    "a batch sampled on the host: its logits' read back (decode_tail.logits_read_ns) and the host's float "
    "conversion and argmax of its 32 rows (decode_tail.host_argmax_ns: HostModel.host_logit_ns a logit, fitted to "
    "PERF.md's batch-32 Llama-3.2-1B rows) are added to the host's per-step figure"
)


def arch_of(system: str) -> str:
    """The chip architecture (``meshnn.device.arch.Arch`` value) of a ``perf_model.SYSTEMS`` system name."""
    return "blackhole" if system.startswith("p") else "wormhole_b0"


def decode_chunk(system: str, *, dynamic: bool) -> int:
    """The decode SDPA's chunk on ``system`` for a row measured before #33978 (``dynamic=False``) or after."""
    return 0 if dynamic else SDPA_DECODE_CHUNK[arch_of(system)]


def gathered_width(devices: int, vocab: int) -> int:
    """The width of device 0's all-gathered logits (columns): each device's share of ``vocab`` tile-padded."""
    return math.ceil(vocab / (TILE * devices)) * TILE * devices


def logits_read_ns(system: str, devices: int, vocab: int) -> float:
    """The host's read of device 0's gathered logits after a decode step (ns): 32 rows of the vocabulary,
    each device's share tile-padded, in bfloat16 row-major pages of a row, from a chip with its own PCIe
    link (device 0 of an N300 or a T3000)."""
    row = 2 * gathered_width(devices, vocab)
    return host_read_ns(arch_of(system), TILE * row, row)


def host_argmax_ns(devices: int, vocab: int, host: HostModel) -> float:
    """The host's work on the logits it read back (ns): ``process_output_decode``'s ``.float()`` of the 32 gathered
    rows and ``sample_host``'s ``torch.argmax``, at ``host.host_logit_ns`` a logit of the gathered width (the
    float conversion takes the whole rows before the slice to the vocabulary)."""
    return TILE * gathered_width(devices, vocab) * host.host_logit_ns
