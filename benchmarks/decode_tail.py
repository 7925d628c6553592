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
  argmax on the device and read back a token.  Not timed: the host's ``.float()`` and ``torch.argmax`` of the
  32 rows (no published host rate; see :data:`HOST_SAMPLING_NOT_TIMED`).
"""

from __future__ import annotations

import math

from meshnn.perf.transfer import host_read_ns

TILE = 32
SDPA_DECODE_CHUNK = {"wormhole_b0": 256, "blackhole": 128}
"""SDPA_DECODE_PROGCFG's q / k chunk by architecture, 2025-05-13 to 2026-01-06 (Wormhole's also before)."""
DYNAMIC_DECODE_CHUNK_ROWS = ("Ministral-8B", "QwQ-32B")
"""PERF.md's rows measured after tt-metal #33978 (2026-01-06): Ministral-8B (2026-01-24), QwQ-32B (2026-03-23);
model_targets.yaml's figures (2026-06) likewise."""
HOST_SAMPLING_NOT_TIMED = (
    "a batch sampled on the host: the host's float conversion and argmax of 32 rows of logits "
    "(simple_text_demo.py's sample_host) are not timed; the read back is"
)


def arch_of(system: str) -> str:
    """The chip architecture (``meshnn.device.arch.Arch`` value) of a ``perf_model.SYSTEMS`` system name."""
    return "blackhole" if system.startswith("p") else "wormhole_b0"


def decode_chunk(system: str, *, dynamic: bool) -> int:
    """The decode SDPA's chunk on ``system`` for a row measured before #33978 (``dynamic=False``) or after."""
    return 0 if dynamic else SDPA_DECODE_CHUNK[arch_of(system)]


def logits_read_ns(system: str, devices: int, vocab: int) -> float:
    """The host's read of device 0's gathered logits after a decode step (ns): 32 rows of the vocabulary,
    each device's share tile-padded, in bfloat16 row-major pages of a row, from a chip with its own PCIe
    link (device 0 of an N300 or a T3000)."""
    width = math.ceil(vocab / (TILE * devices)) * TILE * devices
    row = 2 * width
    return host_read_ns(arch_of(system), TILE * row, row)
