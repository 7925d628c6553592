"""DESIGN.md's layering as a test: every module imports only the layers below its own."""

from __future__ import annotations

import ast
import pathlib

import meshnn

ROOT = pathlib.Path(meshnn.__file__).parent
BELOW = ["errors", "host", "formats", "device", "distributed", "perf", "mesh", "tensor", "ops", "capture"]
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "host": {"errors"},  # the host's worker threads and parallel copies
    "formats": {"errors", "host"},  # host byte formats: nothing of meshes or tensors
    "device": {"errors"},
    "distributed": {"errors", "host"},  # the wait timeout of the rendezvous
    "perf": {"errors", "device", "formats"},  # the device-time model: no mesh, no tensors, no ops
    "mesh": {"errors", "host", "device", "distributed", "perf"},
    "tensor": {"errors", "host", "formats", "device", "distributed", "mesh", "perf"},
    "ops": {"errors", "host", "formats", "device", "distributed", "mesh", "perf", "tensor"},
    "capture": {
        "errors",
        "host",
        "formats",
        "device",
        "distributed",
        "mesh",
        "perf",
        "tensor",
        "ops",
    },  # graph, reports
    "lazy_exports": set(),  # module paths as strings: where the root's lazily imported names live
    "__init__": set(BELOW) | {"__main__", "lazy_exports"},  # the public surface re-exports every layer
    "__main__": {"cli"},
    "compat": {"", "errors"},  # "" is the package root: the public, ttnn-named surface
    "cli": {"", "errors", "compat"},
    "testing": {"", "errors", "compat"},
}


def imported_layers(source: str, module_parts: tuple[str, ...]) -> set[str]:
    """meshnn layers a module's source imports, relative imports resolved; "" is the package root."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ("meshnn", *module_parts[: len(module_parts) - node.level])
                names.append(".".join(base + ((node.module,) if node.module else ())))
            elif node.module:
                names.append(node.module)
    layers = set()
    for name in names:
        parts = name.split(".")
        if parts[0] == "meshnn":
            layers.add(parts[1] if len(parts) > 1 else "")
    return layers


def violations_of(path: pathlib.Path, source: str) -> list[str]:
    parts = path.relative_to(ROOT).with_suffix("").parts
    layer = parts[0]
    allowed = ALLOWED[layer] | {layer}
    return [f"{'/'.join(parts)} imports meshnn.{used or '<root>'}" for used in imported_layers(source, parts) - allowed]


def test_every_module_imports_only_lower_layers():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        assert path.relative_to(ROOT).parts[0].removesuffix(".py") in ALLOWED, f"{path} is in no layer"
        found += violations_of(path, path.read_text())
    assert not found, "layering broken:\n" + "\n".join(found)


def test_the_check_catches_upward_imports():
    fake = ROOT / "device" / "fake.py"
    assert violations_of(fake, "from meshnn.tensor.spec import TensorSpec") == ["device/fake imports meshnn.tensor"]
    assert violations_of(fake, "def f():\n    import meshnn.ops.ccl\n") == ["device/fake imports meshnn.ops"]
    assert violations_of(fake, "from ..mesh import coord") == ["device/fake imports meshnn.mesh"]
    assert violations_of(ROOT / "cli" / "x.py", "from meshnn.mesh import MeshDevice") == ["cli/x imports meshnn.mesh"]
    assert violations_of(fake, "from meshnn.errors import MeshnnError") == []
    formats = ROOT / "formats" / "f.py"
    assert violations_of(formats, "from meshnn.mesh.transfers import HostEncoder") == ["formats/f imports meshnn.mesh"]
    assert violations_of(formats, "from meshnn.tensor.spec import TensorSpec") == ["formats/f imports meshnn.tensor"]
    assert violations_of(formats, "from meshnn.host.threads import each_chunk") == []
    host = ROOT / "host" / "fake.py"
    assert violations_of(host, "from meshnn.formats.codec import encode") == ["host/fake imports meshnn.formats"]
    assert violations_of(ROOT / "mesh" / "x.py", "from ..formats import codec") == ["mesh/x imports meshnn.formats"]
    assert violations_of(ROOT / "mesh" / "x.py", "from meshnn.host.threads import parallel_copyto") == []
    assert violations_of(ROOT / "perf" / "x.py", "from meshnn.mesh import MeshDevice") == ["perf/x imports meshnn.mesh"]
    assert violations_of(ROOT / "tensor" / "x.py", "from meshnn.perf import model") == []
    perf = ROOT / "perf" / "fake.py"
    assert violations_of(perf, "from meshnn.tensor.spec import TensorSpec") == ["perf/fake imports meshnn.tensor"]
    assert violations_of(perf, "from meshnn.device.arch import Arch") == []
    assert violations_of(ROOT / "cli" / "x.py", "import meshnn") == []


def test_each_layer_may_import_only_layers_below_it():
    for position, layer in enumerate(BELOW):
        assert ALLOWED[layer] <= set(BELOW[:position]), f"{layer} may import {ALLOWED[layer] - set(BELOW[:position])}"


MODULE_LINES = 400  # DESIGN.md's budget for a module
FUNCTION_LINES = 60  # and for a function or method, from its def line to its last line


def oversized(path: pathlib.Path, source: str) -> list[str]:
    """What in one module is over the budget: the module itself, then each function."""
    name = "/".join(path.relative_to(ROOT).parts)
    found = []
    if (lines := len(source.splitlines())) > MODULE_LINES:
        found.append(f"{name}: {lines} lines")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            if length > FUNCTION_LINES:
                found.append(f"{name}:{node.lineno} {node.name}: {length} lines")
    return found


def test_every_module_and_function_is_within_the_budget():
    found = [what for path in sorted(ROOT.rglob("*.py")) for what in oversized(path, path.read_text())]
    assert not found, "over DESIGN.md's budget:\n" + "\n".join(found)


def test_the_budget_check_catches_long_modules_and_functions():
    fake = ROOT / "ops" / "fake.py"
    long_function = "def f():\n" + "    x = 1\n" * FUNCTION_LINES
    assert oversized(fake, long_function) == ["ops/fake.py:1 f: 61 lines"]
    assert oversized(fake, "x = 1\n" * (MODULE_LINES + 1)) == ["ops/fake.py: 401 lines"]
    assert oversized(fake, "def f():\n" + "    x = 1\n" * (FUNCTION_LINES - 1)) == []
