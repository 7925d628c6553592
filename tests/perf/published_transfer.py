"""Host <-> device buffer bandwidth: tt-metal's benchmark of blocking buffer writes and reads
(tests/tt_metal/tt_metal/perf_microbenchmark/dispatch/benchmark_rw_buffer.cpp: a 64 MiB MeshBuffer of
uint32 pages, 32 B to 2 KiB, in DRAM or L1, written with ``EnqueueWriteMeshBuffer`` or read with
``ReadShard``, each call blocking; the median GB/s of its repetitions), beside
:mod:`meshnn.perf.transfer`.  Three goldens: Wormhole in tt-metal's CI (2025-12-02; chip 0 on PCIe, chip
1 its Ethernet neighbour), an N300 with the IOMMU on (2026-05-15; also the same transfers from and to
pinned host memory mapped to the NoC, ``ReadPinnedMemory`` / ``WritePinnedMemory``, up to 4 KiB pages)
and a P150 Blackhole (2026-05-15).  The rows each figure of the model is fitted to are in ``FITTED``
(and named in the figure's source in meshnn.perf.transfer); every other row is a check.
"""

from __future__ import annotations

from meshnn.perf.transfer import TransferHost, host_read_ns, host_write_ns

from .figure import Figure

SIZE = 64 << 20  # bytes a call moves
PAGES = (32, 64, 128, 256, 512, 1024, 2048)
PINNED_WRITE_PAGES = (*PAGES, 4096)
GOLDENS = {  # key: (file, arch, label, host)
    "wh": ("benchmark_rw_buffer_golden.json", "wormhole_b0", "WH CI", TransferHost.WORMHOLE_CI),
    "n300_iommu": ("benchmark_rw_buffer_n300_iommu_golden.json", "wormhole_b0", "N300 IOMMU", TransferHost.N300_IOMMU),
    "bh": ("benchmark_rw_buffer_blackhole_golden.json", "blackhole", "P150", TransferHost.P150),
}
SOURCE = "tt-metal: tests/tt_metal/tt_metal/perf_microbenchmark/dispatch/"

ROWS: dict[tuple[str, str, int, int], tuple[float, ...]] = {
    # (golden, Write / Read / *PinnedMemory, buffer 0 DRAM / 1 L1, chip): GB/s at each of PAGES
    # (PINNED_WRITE_PAGES for WritePinnedMemory)
    ("wh", "Write", 0, 0): (0.53, 1.054, 2.077, 4.151, 7.833, 12.701, 14.017),
    ("wh", "Write", 1, 0): (0.569, 1.135, 2.25, 4.437, 8.713, 14.022, 13.997),
    ("wh", "Read", 0, 0): (0.648, 1.239, 2.385, 4.256, 6.961, 10.153, 12.643),
    ("wh", "Read", 1, 0): (0.66, 1.278, 2.416, 4.33, 7.133, 10.521, 13.169),
    ("wh", "Write", 0, 1): (0.569, 1.133, 2.239, 4.398, 8.691, 9.434, 9.407),
    ("wh", "Write", 1, 1): (0.505, 1.006, 1.997, 3.93, 7.771, 9.465, 9.443),
    ("wh", "Read", 0, 1): (0.599, 1.181, 2.28, 4.19, 4.796, 4.8, 4.796),
    ("wh", "Read", 1, 1): (0.654, 1.283, 2.45, 4.501, 4.811, 4.811, 4.788),
    ("n300_iommu", "Write", 0, 0): (0.578, 1.149, 2.278, 4.474, 7.687, 12.072, 12.345),
    ("n300_iommu", "Write", 1, 0): (0.579, 1.152, 2.287, 4.492, 8.709, 12.419, 12.37),
    ("n300_iommu", "Read", 0, 0): (0.646, 1.251, 2.349, 4.194, 6.824, 8.236, 9.421),
    ("n300_iommu", "Read", 1, 0): (0.705, 1.361, 2.543, 4.464, 6.765, 8.5, 9.562),
    ("n300_iommu", "Write", 0, 1): (0.539, 1.071, 2.115, 4.121, 8.023, 10.04, 10.243),
    ("n300_iommu", "Write", 1, 1): (0.539, 1.073, 2.128, 4.194, 8.19, 10.328, 10.328),
    ("n300_iommu", "Read", 0, 1): (0.711, 1.381, 2.591, 4.654, 5.212, 5.241, 5.255),
    ("n300_iommu", "Read", 1, 1): (0.711, 1.383, 2.611, 4.606, 5.127, 5.234, 5.242),
    ("n300_iommu", "ReadPinnedMemory", 0, 0): (0.645, 1.246, 2.333, 4.145, 6.769, 9.716, 12.259),
    ("n300_iommu", "ReadPinnedMemory", 1, 0): (0.703, 1.355, 2.531, 4.482, 7.284, 10.386, 12.56),
    ("n300_iommu", "WritePinnedMemory", 0, 0): (0.579, 1.152, 2.279, 4.504, 8.894, 16.53, 18.793, 19.155),
    ("n300_iommu", "WritePinnedMemory", 1, 0): (0.58, 1.154, 2.293, 4.537, 8.774, 17.07, 18.843, 18.478),
    ("n300_iommu", "ReadPinnedMemory", 0, 1): (0.712, 1.385, 2.608, 4.75, 5.281, 5.289, 5.313),
    ("n300_iommu", "ReadPinnedMemory", 1, 1): (0.712, 1.386, 2.623, 4.753, 5.304, 5.301, 5.315),
    ("n300_iommu", "WritePinnedMemory", 0, 1): (0.539, 1.074, 2.136, 4.154, 7.968, 10.068, 10.19, 10.212),
    ("n300_iommu", "WritePinnedMemory", 1, 1): (0.54, 1.075, 2.137, 4.22, 8.28, 10.151, 10.177, 10.174),
    ("bh", "Write", 0, 0): (0.915, 1.83, 3.643, 7.218, 14.167, 22.705, 22.67),
    ("bh", "Write", 1, 0): (0.845, 1.687, 3.358, 6.656, 13.031, 22.603, 22.643),
    ("bh", "Read", 0, 0): (1.1, 2.2, 4.26, 8.011, 13.491, 14.369, 14.659),
    ("bh", "Read", 1, 0): (0.99, 1.951, 3.792, 7.181, 12.86, 14.446, 14.577),
}

FITTED: dict[tuple[str, str, int, int], tuple[int, ...]] = {  # the rows the model's figures are fitted to
    ("wh", "Write", 0, 0): (32, 2048),  # the device's page cost; the CI host's copy into the issue queue
    ("wh", "Read", 0, 0): (32, 2048),  # the device's page cost and bytes (a read pays both in turn)
    ("wh", "Write", 0, 1): (2048,),  # the Ethernet tunnel to a remote chip, writes
    ("wh", "Read", 0, 1): (2048,),  # and reads
    ("n300_iommu", "WritePinnedMemory", 0, 0): (2048,),  # the device's write stream (no host copy)
    ("n300_iommu", "Write", 0, 0): (2048,),  # the IOMMU host's copy into the issue queue
    ("n300_iommu", "Read", 0, 0): (2048,),  # and out of the completion queue
    ("bh", "Write", 0, 0): (32, 2048),  # the device's page cost; the P150 host's copy
    ("bh", "Read", 0, 0): (32, 512, 2048),  # the device's page cost and bytes; the host's copy out
}


def model_gbps(golden: str, direction: str, page: int, chip: int = 0) -> float:
    """The model's GB/s for a blocking 64 MiB transfer of ``page`` B pages of the golden's host and arch
    (``direction``: Write, Read, WritePinnedMemory or ReadPinnedMemory; chip 1 is remote)."""
    _, arch, _, host = GOLDENS[golden]
    timer = host_write_ns if direction.startswith("Write") else host_read_ns
    ns = timer(arch, SIZE, page, remote=chip == 1, host=host, pinned=direction.endswith("PinnedMemory"))
    return SIZE / ns


def figures() -> list[Figure]:
    """Every row of the three goldens, DRAM and L1, chip 0 and (where the golden has it) chip 1."""
    out = []
    for key, values in ROWS.items():
        golden, direction, buffer, chip = key
        file, _, label, _ = GOLDENS[golden]
        pages = PINNED_WRITE_PAGES if direction == "WritePinnedMemory" else PAGES
        verb = direction.removesuffix("PinnedMemory").lower() + (" pinned" if direction.endswith("Memory") else "")
        for page, gbps in zip(pages, values, strict=True):
            where = ("DRAM", "L1")[buffer]
            name = f"{label} host {verb} {page} B pages, {where}, chip {chip}"
            fitted = page in FITTED.get(key, ())

            def model(g=golden, d=direction, p=page, c=chip) -> float:
                return model_gbps(g, d, p, c)

            out.append(Figure(name, SOURCE + file, gbps, gbps, "GB/s", model, True, "", fitted, "host transfers"))
    return out
