"""``ttnn.tracer``: ``trace()`` records the ttnn ops a block of code runs and ``visualize()`` draws
them, op by op with the tensors between them, as a Graphviz DOT graph.

ttnn's tracer also records torch calls and renders with graphviz; meshnn records the ttnn ops and
tensors (through a ``ttnn.graph`` capture) and gives the DOT text, written to ``file_name`` when one
is given (render it with ``dot -Tsvg``), so no graphviz install is needed.

Layers: imports the capture layer's graph capture.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from meshnn.capture import graph

_LAST: list[list[dict]] = []  # the node list of the last trace that ended


@contextlib.contextmanager
def trace() -> Iterator[None]:
    """Record the ttnn ops run inside the ``with`` block (traces nest, as graph captures do)."""
    graph.begin_graph_capture()
    try:
        yield
    finally:
        nodes = graph.end_graph_capture()
        _LAST[:] = [nodes]


def visualize(*values: Any, file_name: str | Path | None = None, **_: Any) -> str:
    """The DOT graph of the last trace (``values``, the outputs ttnn's tracer starts from, are
    accepted and not needed: the whole trace is drawn); written to ``file_name`` when given."""
    nodes = _LAST[0] if _LAST else []
    text = to_dot(nodes)
    if file_name is not None:
        Path(file_name).write_text(text)
    return text


def to_dot(nodes: list[dict]) -> str:
    """Ops (``function_start`` nodes, named) and tensors (their shapes) as a DOT digraph, with the
    graph capture's connections between them."""
    shown = {n["counter"]: n for n in nodes if n["node_type"] in ("function_start", "tensor")}
    lines = ["digraph ttnn_trace {", '  node [fontname="Helvetica"];']
    for counter, node in shown.items():
        params = node.get("params", {})
        if node["node_type"] == "function_start":
            label, shape = params.get("name", "op"), "box"
        else:
            label, shape = f"tensor {params.get('shape', '')}".strip(), "ellipse"
        lines.append(f'  n{counter} [label="{_escaped(str(label))}", shape={shape}];')
    for counter, node in shown.items():
        for target in node.get("connections", []):
            if target in shown:
                lines.append(f"  n{counter} -> n{target};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
