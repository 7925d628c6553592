"""DESIGN.md's layering as a test: every module imports only the layers below its own."""

from __future__ import annotations

import ast
import pathlib

import meshnn

ROOT = pathlib.Path(meshnn.__file__).parent
BELOW = ["errors", "device", "formats", "perf", "distributed", "mesh", "tensor", "ops"]
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "device": {"errors"},
    "formats": {"errors", "device"},  # the element and tile formats (tensor/dtypes, layout, bfloat, encoding)
    "perf": {"errors", "device", "formats"},  # the performance model: no mesh, no tensors, no ops
    "distributed": {"errors"},
    "mesh": {"errors", "device", "distributed"},
    "tensor": {"errors", "device", "distributed", "mesh", "perf"},
    "ops": {"errors", "device", "distributed", "mesh", "tensor", "perf"},
    "__init__": set(BELOW) | {"__main__"},  # the public surface re-exports every layer
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
    assert violations_of(ROOT / "cli" / "x.py", "import meshnn") == []
    perf = ROOT / "perf" / "fake.py"
    assert violations_of(perf, "from meshnn.mesh import MeshDevice") == ["perf/fake imports meshnn.mesh"]
    assert violations_of(perf, "from meshnn.tensor.spec import TensorSpec") == ["perf/fake imports meshnn.tensor"]
    assert violations_of(perf, "from meshnn.device.arch import Arch") == []
    assert violations_of(ROOT / "ops" / "x.py", "from meshnn.perf import predict") == []
