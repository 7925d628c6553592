"""torch's thread count inside meshnn's kernels (:mod:`meshnn.host.omp`): a kernel runs torch on
its thread alone, a large product on the thread's usual count, and neither the calling thread's
count nor the count a new thread starts with changes.

On a shared host a two-thread parallel region waits for whichever of its threads the scheduler
runs last: many small operations on torch's threads cost many time slices (see the module).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import meshnn as ttnn
from meshnn.host import omp
from meshnn.ops import matmul_kernel

pytestmark = pytest.mark.skipif(not omp.available(), reason="torch's OpenMP runtime not found")


@pytest.fixture
def two_threads():
    """torch's count 2 on this thread (and so for new threads), restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def count_on_a_new_thread() -> int:
    seen = []

    def run() -> None:
        torch.ones(4).add_(1)  # its first torch op sets its count from the starting one
        seen.append(torch.get_num_threads())

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return seen[0]


def test_one_thread_sets_the_calling_thread_alone_and_restore_gives_it_back(two_threads):
    token = omp.one_thread()
    try:
        assert torch.get_num_threads() == 1
        inner = omp.one_thread()  # calls nest: the usual count is the outermost's
        omp.restore(inner)
        assert torch.get_num_threads() == 1
        assert count_on_a_new_thread() == 2  # torch's starting count untouched
    finally:
        omp.restore(token)
    assert torch.get_num_threads() == 2


def test_a_large_product_takes_the_usual_count_a_small_one_one_thread(two_threads):
    token = omp.one_thread()
    try:
        with omp.wide(omp.WIDE_MIN_MACS):
            assert torch.get_num_threads() == 2
        assert torch.get_num_threads() == 1
        with omp.wide(omp.WIDE_MIN_MACS - 1):
            assert torch.get_num_threads() == 1
        inner = omp.one_thread()
        omp.restore(inner)
        with omp.wide(omp.WIDE_MIN_MACS):  # still the outermost's usual count
            assert torch.get_num_threads() == 2
    finally:
        omp.restore(token)
    with omp.wide(omp.WIDE_MIN_MACS):  # outside a kernel: nothing to widen
        assert torch.get_num_threads() == 2


def test_matmul_kernels_run_torch_on_one_thread_but_large_products(two_threads, monkeypatch):
    seen = []

    def spying(original):
        def spy(torch_, x, w, *args):
            seen.append((x.shape[-2] * x.shape[-1] * w.shape[-1], torch_.get_num_threads()))
            return original(torch_, x, w, *args)

        return spy

    for name in ("_matmul", "_wide_matmul"):  # (torch's bfloat16 product, or the float32 one in blocks)
        monkeypatch.setattr(matmul_kernel, name, spying(getattr(matmul_kernel, name)))
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1))
    try:
        rng = np.random.default_rng(0)
        for k, n in ((64, 64), (2048, 1024)):  # 131 k and 67 M multiply-adds
            x = ttnn.from_torch(
                torch.from_numpy(rng.standard_normal((32, k), np.float32)),
                dtype=ttnn.bfloat16,
                layout=ttnn.TILE_LAYOUT,
                device=mesh,
            )
            w = ttnn.from_torch(
                torch.from_numpy(rng.standard_normal((k, n), np.float32)),
                dtype=ttnn.bfloat8_b,
                layout=ttnn.TILE_LAYOUT,
                device=mesh,
            )
            ttnn.to_torch(ttnn.matmul(x, w))
    finally:
        ttnn.close_mesh_device(mesh)
    assert list(dict.fromkeys(seen)) == [(32 * 64 * 64, 1), (32 * 2048 * 1024, 2)]  # (blocks' recursion: once)
    assert torch.get_num_threads() == 2
    assert count_on_a_new_thread() == 2


def test_a_fresh_thread_s_first_kernel_runs_on_one_thread(two_threads):
    """torch sets a thread's count at the thread's first operation; one_thread makes that set-up
    happen first, so the first kernel on a new thread (a queue's dispatch thread) is on one too."""
    seen = []

    def run() -> None:
        token = omp.one_thread()
        try:
            seen.append(torch.get_num_threads())
        finally:
            omp.restore(token)
        seen.append(torch.get_num_threads())

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [1, 2]
