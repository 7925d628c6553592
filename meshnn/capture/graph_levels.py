"""``ttnn.graph.extract_levelized_graph(trace, max_level=1)``: a capture as a graph of ops and tensors.

The vertices, numbered from 0 in this order: every ``tensor`` node at stacking level 1 (a tensor
a top-level op takes: ``name`` ``tensor[<id>]``, ``output_shape`` its shape), then every
``function_start`` at a stacking level up to ``max_level`` (``name``, ``arguments``).  A vertex is
``{"counter", "stacking_level", "name", "arguments", "in_edges", "out_edges", "internals",
"output_info", "output_shape"}``:

- ``out_edges``: data flow.  A tensor vertex points to each vertex function that takes it; a
  function points to each vertex function taking a tensor it produced (a tensor's producer is the
  outermost ``function_end`` connected to it); ``in_edges`` are the same edges seen from the sink;
- ``internals``: the vertex functions one level deeper between the function's start and end;
- ``output_info``: the first argument (a ``Tensor(...)`` text) of the first consumer at the same level;
- ``output_shape``: the shapes of the tensors its ``function_end`` connects to.

A trace without ``stacking_level`` (``end_graph_capture``'s) has it worked out from the nesting of
its functions (a top-level function 1, the nodes inside it 1, a nested function 2).

Layers: the capture layer only (plain dicts in, plain dicts out).
"""

from __future__ import annotations

from collections.abc import Sequence

from meshnn.errors import MeshnnTypeError, MeshnnValueError


def stacking_levels(trace: Sequence[dict]) -> list[int]:
    """Each node's stacking level: its own ``stacking_level``, else from the nesting of functions."""
    levels, depth = [], 0
    for node in trace:
        kind = node.get("node_type")
        if kind == "function_start":
            depth += 1
            computed = depth
        elif kind == "function_end":
            computed, depth = depth, max(depth - 1, 0)
        else:
            computed = depth
        levels.append(int(node.get("stacking_level", computed)))
    return levels


def _checked(trace: object, max_level: object) -> list[dict]:
    if not isinstance(trace, list | tuple) or not all(isinstance(n, dict) for n in trace):
        raise MeshnnTypeError("extract_levelized_graph: trace must be a list of graph nodes (end_graph_capture's)")
    if isinstance(max_level, bool) or not isinstance(max_level, int) or max_level < 1:
        raise MeshnnValueError(f"extract_levelized_graph: max_level must be an int >= 1, got {max_level!r}")
    for index, node in enumerate(trace):
        if node.get("counter") != index:
            raise MeshnnValueError(f"extract_levelized_graph: node {index} has counter {node.get('counter')!r}")
    return list(trace)


def _ends(trace: list[dict]) -> dict[int, int]:
    """function_start counter -> its function_end (the first it connects to with its name)."""
    ends = {}
    for node in trace:
        if node["node_type"] == "function_start":
            name = node["params"].get("name")
            for sink in node.get("connections", []):
                is_end = 0 <= sink < len(trace) and trace[sink]["node_type"] == "function_end"
                if is_end and trace[sink]["params"].get("name") == name:
                    ends[node["counter"]] = sink
                    break
    return ends


def _producers(trace: list[dict], levels: list[int]) -> dict[int, int]:
    """tensor counter -> the outermost function_end connected to it."""
    found: dict[int, int] = {}
    for node in trace:
        if node["node_type"] != "function_end":
            continue
        for sink in node.get("connections", []):
            is_tensor = 0 <= sink < len(trace) and trace[sink]["node_type"] == "tensor"
            if is_tensor and (sink not in found or levels[node["counter"]] < levels[found[sink]]):
                found[sink] = node["counter"]
    return found


def _vertex(counter: int, level: int, name: str, arguments: list[str], shapes: list[str]) -> dict:
    return {
        "counter": counter,
        "stacking_level": level,
        "name": name,
        "arguments": arguments,
        "in_edges": [],
        "out_edges": [],
        "internals": [],
        "output_info": [],
        "output_shape": shapes,
    }


def _vertices(trace: list[dict], levels: list[int], max_level: int) -> tuple[list[dict], dict[int, int]]:
    vertices, ids = [], {}
    for node in trace:
        if node["node_type"] == "tensor" and levels[node["counter"]] == 1:
            params = node["params"]
            shapes = [str(params["shape"])] if "shape" in params else []
            ids[node["counter"]] = len(vertices)
            vertices.append(_vertex(len(vertices), 1, f"tensor[{params.get('tensor_id')}]", [], shapes))
    for node in trace:
        if node["node_type"] == "function_start" and levels[node["counter"]] <= max_level:
            arguments = [a for a in node.get("arguments", []) if isinstance(a, str)]
            ids[node["counter"]] = len(vertices)
            vertices.append(_vertex(len(vertices), levels[node["counter"]], node["params"]["name"], arguments, []))
    return vertices, ids


def _link(vertices: list[dict], source: int, sink: int) -> None:
    if source != sink and sink not in vertices[source]["out_edges"]:
        vertices[source]["out_edges"].append(sink)
        vertices[sink]["in_edges"].append(source)


def _edges(trace: list[dict], vertices: list[dict], ids: dict[int, int], producers: dict[int, int], ends: dict) -> None:
    starts_of_ends = {end: start for start, end in ends.items()}
    for tensor in (n for n in trace if n["node_type"] == "tensor"):
        for consumer in tensor.get("connections", []):
            if consumer not in ids or trace[consumer]["node_type"] != "function_start":
                continue
            if tensor["counter"] in ids:
                _link(vertices, ids[tensor["counter"]], ids[consumer])
                continue
            producer = starts_of_ends.get(producers.get(tensor["counter"], -1))
            if producer in ids:
                _link(vertices, ids[producer], ids[consumer])


def extract_levelized_graph(trace: list[dict], max_level: int = 1) -> list[dict]:
    """The levelized graph of ``trace`` down to ``max_level`` (see the module docstring)."""
    trace = _checked(trace, max_level)
    levels = stacking_levels(trace)
    ends, producers = _ends(trace), _producers(trace, levels)
    vertices, ids = _vertices(trace, levels, max_level)
    _edges(trace, vertices, ids, producers, ends)
    for counter, vid in ids.items():
        vertex, end = vertices[vid], ends.get(counter)
        if trace[counter]["node_type"] != "function_start" or end is None:
            continue
        inside = range(counter + 1, end)
        child = levels[counter] + 1
        vertex["internals"] = [
            ids[c] for c in inside if c in ids and trace[c]["node_type"] == "function_start" and levels[c] == child
        ]
        for sink in trace[end].get("connections", []):
            shape = trace[sink]["params"].get("shape") if trace[sink]["node_type"] == "tensor" else None
            if shape is not None and str(shape) not in vertex["output_shape"]:
                vertex["output_shape"].append(str(shape))
    for vertex in vertices:
        for consumer in (vertices[c] for c in vertex["out_edges"]):
            first = consumer["arguments"][0] if consumer["arguments"] else ""
            if consumer["stacking_level"] == vertex["stacking_level"] and first.startswith("Tensor("):
                vertex["output_info"] = [first]
                break
    return vertices
