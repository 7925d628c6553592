"""``ttnn.graph.pretty_format`` / ``pretty_print`` / ``visualize``: a capture as text or as a picture.

``pretty_format`` indents each node by the functions it is inside (four spaces a level) and names
it as ttnn's does ("Function Start: ttnn::add", "Add Tensor: 3", ...); a node of a type ttnn does not
know raises.  ``visualize`` draws every node, each function a cluster holding what it encloses,
and every connection an edge, as graphviz DOT text (returned); with ``file_name`` (``.svg``,
``.png`` or ``.pdf``, ttnn's rule) graphviz's ``dot`` program renders the picture, and without
``dot`` on the PATH the call raises before writing anything.

Layers: the capture layer only.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from meshnn.errors import MeshnnError, MeshnnValueError

_TITLES = {
    "capture_start": "Capture Start",
    "capture_end": "Capture End",
    "buffer": "Add Device Buffer",
    "buffer_allocate": "Allocate Device Buffer",
    "buffer_deallocate": "Deallocate Device Buffer",
    "circular_buffer_allocate": "Allocate Circular Buffer",
    "circular_buffer_deallocate_all": "Deallocate All Circular Buffers",
}
_COLOURS = ("#0000ff80", "#ee00ee80", "#ff000080", "#eeee0080", "#00ff0080", "#00eeee80")


def _title(node: dict) -> str:
    kind = node["node_type"]
    if kind == "function_start":
        return "Function Start: " + node["params"]["name"]
    if kind == "function_end":
        return "Function End:   " + node["params"]["name"]
    if kind == "tensor":
        return "Add Tensor: " + str(node["params"]["tensor_id"])
    if kind not in _TITLES:
        raise MeshnnValueError(f"Unknown node type: {kind}")
    return _TITLES[kind]


def pretty_format(captured_graph: Sequence[dict]) -> str:
    """The capture as indented text, one node a line (see the module docstring)."""
    lines, depth = [], 0
    for node in captured_graph:
        if node["node_type"] == "function_end":
            depth = max(depth - 1, 0)
        tabs = "    " * depth
        lines.append(f"{tabs}{_title(node):{50 - len(tabs)}}")
        if node["node_type"] == "function_start":
            depth += 1
    return "".join(line + "\n" for line in lines)


def pretty_print(captured_graph: Sequence[dict]) -> None:
    """Print :func:`pretty_format`'s text."""
    print(pretty_format(captured_graph))


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def default_node(node: dict) -> str:
    """One node's DOT statement: its type, and its function's name or its tensor's id."""
    label = node["node_type"]
    if node["node_type"] in ("function_start", "function_end"):
        label += "\n" + node["params"]["name"]
    elif node["node_type"] == "tensor":
        label += "\n" + str(node["params"]["tensor_id"])
    return f'node_{node["counter"]} [label={_quoted(label)}, fillcolor="#DCDCDC"];'


def default_edge(source: int, sink: int) -> str:
    return f"node_{source} -> node_{sink};"


def to_dot(
    captured_graph: Sequence[dict],
    visualize_node: Callable[[dict], str] = default_node,
    visualize_edge: Callable[[int, int], str] = default_edge,
) -> str:
    """The capture as DOT text: functions as nested clusters, connections as edges."""
    lines = ["digraph {", '  graph [ordering="in", rankdir="TB"];']
    lines.append('  node [style="filled", fontsize="10", shape="box", margin="0", height="0.2"];')
    depth, clusters = 0, 0
    for node in captured_graph:
        if node["node_type"] == "function_start":
            depth += 1
            colour = _COLOURS[depth % len(_COLOURS)]
            lines.append(f"{'  ' * depth}subgraph cluster_{clusters} {{")
            lines.append(f'{"  " * (depth + 1)}label={_quoted(node["params"]["name"])}; bgcolor="{colour}";')
            clusters += 1
        lines.append("  " * (depth + 1) + visualize_node(node))
        if node["node_type"] == "function_end" and depth:
            lines.append("  " * depth + "}")
            depth -= 1
    lines.extend("  " * depth + "}" for depth in range(depth, 0, -1))
    for node in captured_graph:
        lines.extend("  " + visualize_edge(node["counter"], sink) for sink in node.get("connections", []))
    return "\n".join([*lines, "}"]) + "\n"


def visualize(
    captured_graph: Sequence[dict],
    *,
    file_name: str | Path | None = None,
    visualize_node: Callable[[dict], str] = default_node,
    visualize_edge: Callable[[int, int], str] = default_edge,
) -> str:
    """The capture as DOT text; with ``file_name`` also rendered there by graphviz's ``dot``."""
    target = None if file_name is None else Path(file_name)
    if target is not None and target.suffix not in (".svg", ".png", ".pdf"):
        raise MeshnnValueError(f"file_name must have a .svg, .png or .pdf suffix, not {target.suffix}")
    text = to_dot(captured_graph, visualize_node, visualize_edge)
    if target is None:
        return text
    dot = shutil.which("dot")
    if dot is None:
        raise MeshnnError("ttnn.graph.visualize: graphviz's 'dot' program is not on the PATH to render it")
    subprocess.run([dot, f"-T{target.suffix[1:]}", "-o", str(target)], input=text.encode(), check=True, timeout=120)
    return text
