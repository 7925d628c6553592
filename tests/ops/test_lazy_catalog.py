"""The op catalog loads at the first op asked for, not with ``import meshnn``: every way of reaching
an op (the package root, ``ttnn.experimental`` / ``transformer`` / ``prim``, a Tensor operator, the
registry's queries) finds it then, and a thread that asks while another loads waits for the load.
(How long the import takes is measured in ``benchmarks/import_time.py``.)"""

from __future__ import annotations

import subprocess
import sys

OP_MODULES = "sorted({'meshnn.ops.eltwise.unary', 'meshnn.ops.matmul', 'meshnn.ops.backward.binary'} & {*sys.modules})"
LOADED = "__import__('meshnn.ops.loading').ops.loading.catalog_loaded()"


def run(code: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_import_meshnn_declares_no_op_module_until_an_op_is_asked_for():
    code = (
        "import sys, meshnn\n"
        f"print({OP_MODULES}, {LOADED})\n"
        "print(meshnn.relu.__name__, meshnn.relu.__module__)\n"
        f"print(bool({OP_MODULES}), {LOADED})\n"
    )
    assert run(code) == ["[] False", "relu meshnn.ops.eltwise.unary", "True True"]


def test_a_tensor_operator_loads_the_catalog():
    code = (
        "import numpy as np, meshnn\n"
        "d = meshnn.open_mesh_device(meshnn.MeshShape(1, 2))\n"
        "a = meshnn.from_torch(np.full((32, 32), 3, np.float32), layout=meshnn.TILE_LAYOUT, device=d,\n"
        "                      mesh_mapper=meshnn.ReplicateTensorToMesh(d))\n"
        f"print({LOADED})\n"
        "c = a + a\n"
        f"print({LOADED}, float(meshnn.to_torch(c, mesh_composer=meshnn.ConcatMeshToTensor(d, dim=0))[0, 0]))\n"
        "meshnn.close_mesh_device(d)\n"
    )
    assert run(code) == ["False", "True 6.0"]


def test_the_namespaces_and_registry_queries_load_the_catalog():
    code = "import meshnn\nprint(meshnn.experimental.all_gather_async.__name__)\n"
    assert run(code) == ["all_gather_async"]
    code = "import meshnn\nprint(meshnn.transformer.scaled_dot_product_attention.__name__)\n"
    assert run(code) == ["scaled_dot_product_attention"]
    code = (
        "import meshnn\nfrom meshnn.ops import registry\n"
        "names = {e.name for e in registry.entries()}\n"
        "print('add' in names, 'experimental.all_gather_async' in names, 'matmul' in dir(meshnn))\n"
    )
    assert run(code) == ["True True True"]


def test_an_unknown_name_is_still_an_attribute_error_after_the_load():
    code = (
        "import meshnn\n"
        "print(hasattr(meshnn, 'no_such_op'), hasattr(meshnn, 'add'))\n"
        "try:\n    meshnn.experimental.no_such_op\nexcept meshnn.NotImplementedByMeshnn as e:\n    print('refused')\n"
    )
    assert run(code) == ["False True", "refused"]


def test_threads_asking_at_once_all_find_the_op():
    code = (
        "import threading, meshnn\n"
        "found = []\n"
        "def ask():\n    found.append(meshnn.matmul.__name__)\n"
        "threads = [threading.Thread(target=ask) for _ in range(8)]\n"
        "[t.start() for t in threads]\n[t.join() for t in threads]\n"
        "print(found == ['matmul'] * 8)\n"
    )
    assert run(code) == ["True"]
