"""ttnn's graph-capture node list, built node by node with ttnn's connection rules.

A node is ``{"counter": i, "node_type": ..., "params": {str: str}, "arguments": [str],
"connections": [int]}`` with ``counter`` its index; every param value is a string and params are
in key order (ttnn's JSON).  The rules (tt-metal's GraphProcessor):

- node 0 is ``capture_start``; a stack of open functions starts with it;
- ``function_start``: the last finished ``function_end`` (if any, once) and the open function on
  top of the stack connect to it; it goes on the stack;
- a ``tensor`` node is made once per tensor id; a ``buffer`` node once per buffer (made inside the
  open function, which connects to it); each time a tensor is seen its buffer connects to it (so a
  buffer's connections may repeat a tensor, as ttnn's do);
- an input tensor connects to the function it enters;
- ``buffer_allocate`` / ``buffer_deallocate`` connect to their buffer; the open function connects
  to them;
- ``circular_buffer_deallocate_all`` and the open function connect to each other;
  ``circular_buffer_allocate`` has no connections; the open function connects to it;
- ``function_end`` takes the open function's name; the function connects to it; it connects to its
  output tensors; it becomes the last finished one;
- ``capture_end``: the last finished function (or, with none, node 0) connects to it.

Buffers are told apart by (mesh id, buffer type, address) while they live: an allocation makes a
new buffer node, a free forgets the address.

Layers: imports errors and the device layer's buffer types.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from meshnn.device.buffer import BufferLayout, BufferType

BufferKey = tuple[int, int, int]
"""(mesh id, buffer type value, address): one live buffer."""


@dataclass(frozen=True, slots=True)
class BufferFacts:
    """What graph nodes say of one MeshBuffer: ``size`` and ``page_size`` are one device's bytes,
    ``num_cores`` the shard cores (0: interleaved), ``device_id`` the mesh's first device."""

    key: BufferKey
    address: int
    size: int
    buffer_type: BufferType
    layout: str
    page_size: int
    num_cores: int
    device_id: int

    @classmethod
    def of(cls, mesh: Any, address: int, layout: BufferLayout) -> BufferFacts:
        kind = layout.buffer_type
        return cls(
            (mesh.mesh_id, kind.value, address),
            address,
            layout.size,
            kind,
            layout.memory_layout.name,
            layout.page_size,
            layout.num_shards or 0,
            mesh.get_device_ids()[0],
        )

    @property
    def type_name(self) -> str:
        return "DRAM" if self.buffer_type.is_dram else "L1"


@dataclass(frozen=True, slots=True)
class CircularBuffer:
    """One circular buffer of a program: ``size`` bytes on each core of ``core_range_set`` (ttnn's
    text form); a globally allocated one lives inside an L1 tensor's buffer (no L1 of its own)."""

    size: int
    address: int
    core_range_set: str
    globally_allocated: bool


def node(counter: int, node_type: str, params: dict[str, object] | None = None, arguments: Sequence[str] = ()) -> dict:
    """A node in ttnn's JSON form (params as strings, in key order)."""
    texts = {key: str(value) for key, value in sorted((params or {}).items())}
    return {
        "counter": counter,
        "node_type": node_type,
        "params": texts,
        "arguments": list(arguments),
        "connections": [],
    }


class GraphBuilder:
    """One capture's node list (see the module docstring for the rules)."""

    def __init__(self) -> None:
        self.nodes: list[dict] = [node(0, "capture_start")]
        self._stack = [0]
        self._last_finished = -1
        self._tensors: dict[int, int] = {}  # tensor id -> its node
        self._buffers: dict[BufferKey, int] = {}  # live buffer -> its node
        self.details: dict[int, dict[str, object]] = {}  # tensor id -> extra params of its node (reports)
        self.levels: list[int] = [0]  # each node's stacking level (ttnn's ``stacking_level``)
        self.inputs: dict[int, list[int]] = {}  # function_start -> its input tensor nodes (``input_tensors``)

    def _add(self, node_type: str, params: dict[str, object] | None = None, arguments: Sequence[str] = ()) -> int:
        counter = len(self.nodes)
        self.nodes.append(node(counter, node_type, params, arguments))
        self.levels.append(len(self._stack) - (node_type != "function_start"))
        return counter

    def _connect(self, source: int, sink: int) -> None:
        self.nodes[source]["connections"].append(sink)

    @property
    def top(self) -> int:
        """The open function (node 0 when none)."""
        return self._stack[-1]

    # ------------------------------------------------------------------------ functions

    def function_start(self, name: str, arguments: Sequence[str]) -> int:
        counter = self._add("function_start", {"inputs": len(arguments), "name": name}, arguments)
        if self._last_finished != -1:
            self._connect(self._last_finished, counter)
            self._last_finished = -1
        self._connect(self.top, counter)
        self._stack.append(counter)
        return counter

    def function_end(
        self, outputs: Sequence[tuple[int, str, BufferFacts | None]] = (), duration_ns: int | None = None
    ) -> int:
        """Close the open function; ``outputs``: (tensor id, shape text, its buffer or None);
        ``duration_ns``: the function's wall time in nanoseconds (reports' ``duration_ns``)."""
        start = self._stack.pop()
        counter = self._add("function_end", {"name": self.nodes[start]["params"]["name"]})
        self.levels[counter] = self.levels[start]  # (ttnn's: the level of the function it ends)
        if duration_ns is not None:
            self.nodes[counter]["duration_ns"] = int(duration_ns)
        self._connect(start, counter)
        self._last_finished = counter
        for output in outputs:
            self._connect(counter, self.tensor(*output))
        return counter

    def abandon(self) -> None:
        """The open function raised: it stays without a ``function_end`` and closes."""
        if len(self._stack) > 1:
            self._stack.pop()

    # -------------------------------------------------------------------- tensors, buffers

    def tensor(self, tensor_id: int, shape: str, buffer: BufferFacts | None) -> int:
        counter = self._tensors.get(tensor_id)
        if counter is None:
            params = {"shape": shape, "tensor_id": tensor_id, **self.details.get(tensor_id, {})}
            counter = self._tensors[tensor_id] = self._add("tensor", params)
        if buffer is not None:
            self._connect(self.buffer(buffer), counter)
        return counter

    def input_tensor(self, tensor_id: int, shape: str, buffer: BufferFacts | None) -> None:
        counter = self.tensor(tensor_id, shape, buffer)
        self._connect(counter, self.top)
        self.inputs.setdefault(self.top, []).append(counter)

    def buffer(self, facts: BufferFacts) -> int:
        counter = self._buffers.get(facts.key)
        if counter is None:
            params = {"device_id": facts.device_id, "layout": facts.layout, "size": facts.size, "type": facts.type_name}
            counter = self._buffers[facts.key] = self._add("buffer", params)
            self._connect(self.top, counter)
        return counter

    def _buffer_params(self, facts: BufferFacts) -> dict[str, object]:
        return {
            "device_id": facts.device_id,
            "layout": facts.layout,
            "num_cores": facts.num_cores,
            "page_size": facts.page_size,
            "size": facts.size,
            "type": facts.type_name,
        }

    def buffer_allocate(self, facts: BufferFacts) -> int:
        self._buffers.pop(facts.key, None)  # a new allocation is a new buffer, whatever lived there before
        buffer = self.buffer(facts)
        counter = self._add("buffer_allocate", {**self._buffer_params(facts), "address": facts.address})
        self._connect(counter, buffer)
        self._connect(self.top, counter)
        return counter

    def buffer_deallocate(self, facts: BufferFacts) -> int:
        buffer = self.buffer(facts)
        counter = self._add("buffer_deallocate", self._buffer_params(facts))
        self._connect(counter, buffer)
        self._connect(self.top, counter)
        self._buffers.pop(facts.key, None)
        return counter

    # ---------------------------------------------------------------- circular buffers, end

    def circular_buffers(self, device_id: int, buffers: Sequence[CircularBuffer]) -> None:
        """A program about to run: every earlier CB freed, then this program's CBs."""
        counter = self._add("circular_buffer_deallocate_all", {"device_id": device_id})
        self._connect(counter, self.top)
        self._connect(self.top, counter)
        for cb in buffers:
            params = {
                "address": cb.address,
                "core_range_set": cb.core_range_set,
                "device_id": device_id,
                "globally_allocated": int(cb.globally_allocated),
                "size": cb.size,
            }
            self._connect(self.top, self._add("circular_buffer_allocate", params))

    def finish(self, duration_ns: int | None = None) -> list[dict]:
        """Add ``capture_end`` (with the capture's ``duration_ns`` when given) and return the node list."""
        counter = self._add("capture_end")
        if duration_ns is not None:
            self.nodes[counter]["duration_ns"] = int(duration_ns)
        self._connect(self._last_finished if self._last_finished != -1 else 0, counter)
        return self.nodes
