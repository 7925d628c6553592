"""``ttnn.graph_tracer_utils.GraphTracerUtils``: a captured graph's calls as JSON-ready values.

A node of a graph capture (:mod:`meshnn.capture.graph`) holds its arguments as ttnn prints them, in
C++'s form: ``Shape([1, 4, 32, 32])``, ``DataType::BFLOAT16``,
``MemoryConfig(memory_layout=TensorMemoryLayout::INTERLEAVED,buffer_type=BufferType::L1,shard_spec=std::nullopt)``.
:meth:`GraphTracerUtils.serialize_graph` turns each node that has arguments into
``{"operation": name, "arguments": [{"arg0": value}, ...]}``, each value read as ttnn's helper reads it:

- a call of named fields ``T(a=x, b=y)`` is ``{"T": {"a": x, "b": y}}`` at the top and
  ``{"a": x, "b": y}`` inside another value (the type named only at the top);
- a call of one unnamed value ``T(v)`` is ``{"T": v}`` at the top and ``v`` inside;
- ``[a, b]`` is a list; ``[<nullopt>]`` is ``"<nullopt>"``; ``[unsupported type, T]`` is
  ``{"unsupported type": "T"}``; braces of numbers ``{32, 32}`` stay a string ``"{32, 32}"``;
- numbers are ints or floats; anything else (``TensorMemoryLayout::INTERLEAVED``, ``std::nullopt``)
  is its text, with control characters kept as they are.

An argument that does not read this way (several unnamed values in one call, unbalanced brackets) is
``{"UnparsedElement": {"error": why, "element_info": text}}``, as in ttnn.

Layers: imports nothing of meshnn.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_:<>]*")
_INT = re.compile(r"[-+]?\d+")
_FLOAT = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?")
_CLOSERS = {"(": ")", "[": "]", "{": "}"}


class _Unreadable(ValueError):
    """The text is not a value of the form the module's text describes."""


class _Reader:
    """A recursive reader of one printed value (``text[at:]``)."""

    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0

    def _skip(self) -> None:
        while self.at < len(self.text) and self.text[self.at] in " \t\n\r":
            self.at += 1

    def _peek(self) -> str:
        self._skip()
        return self.text[self.at] if self.at < len(self.text) else ""

    def _expect(self, char: str) -> None:
        if self._peek() != char:
            raise _Unreadable(f"expected {char!r} at {self.at} of {self.text!r}")
        self.at += 1

    def value(self, top: bool = False) -> object:
        """The value at the cursor (``top``: the argument itself, whose calls keep their type name)."""
        char = self._peek()
        if char == "[":
            return self._bracketed()
        if char == "{":
            return self._braced()
        match = _NAME.match(self.text, self.at)
        if match and self.text[match.end() : match.end() + 1] == "(":
            self.at = match.end()
            fields = self._call()
            return {match.group(): fields} if top else fields
        return self._scalar()

    def _items(self, closer: str) -> list[object]:
        """Values separated by commas up to ``closer`` (the opener already read)."""
        items: list[object] = []
        if self._peek() == closer:
            self.at += 1
            return items
        while True:
            items.append(self.value())
            if self._peek() == ",":
                self.at += 1
                continue
            self._expect(closer)
            return items

    def _bracketed(self) -> object:
        self._expect("[")
        items = self._items("]")
        if items == ["<nullopt>"]:
            return "<nullopt>"
        if len(items) == 2 and items[0] == "unsupported type":
            return {"unsupported type": str(items[1])}
        return items

    def _braced(self) -> object:
        start = self.at
        self._expect("{")
        items = self._items("}")
        if items and all(isinstance(i, int) for i in items):
            return re.sub(r"\s+", " ", self.text[start : self.at])  # as printed: "{32, 32}"
        return items

    def _call(self) -> object:
        """A call's parenthesised fields: all named (a dict) or one unnamed value."""
        self._expect("(")
        fields: dict[str, object] = {}
        unnamed: list[object] = []
        while self._peek() != ")":
            match = _NAME.match(self.text, self.at)
            if match and self.text[match.end() : match.end() + 1] == "=":
                self.at = match.end() + 1
                fields[match.group()] = self.value()
            else:
                unnamed.append(self.value())
            if self._peek() != ",":
                break
            self.at += 1
        self._expect(")")
        if unnamed and (fields or len(unnamed) > 1):
            raise _Unreadable(f"a call mixes unnamed values with others in {self.text!r}")
        return unnamed[0] if unnamed else fields

    def _scalar(self) -> object:
        """Text up to the next separator outside brackets: a number, or the text itself."""
        start, depth = self.at, 0
        while self.at < len(self.text):
            char = self.text[self.at]
            if char in "([{<":
                depth += 1
            elif char in ")]}>" and depth:
                depth -= 1
            elif char in ",)]}" and not depth:
                break
            self.at += 1
        word = self.text[start : self.at].strip()
        if _INT.fullmatch(word):
            return int(word)
        if _FLOAT.fullmatch(word):
            return float(word)
        return word


def read_argument(text: str) -> object:
    """One printed argument as a JSON-ready value (see the module's text); raises ValueError when
    it does not read."""
    reader = _Reader(text)
    value = reader.value(top=True)
    if reader._peek():
        raise _Unreadable(f"unexpected {reader.text[reader.at :]!r} after the value in {text!r}")
    return value


class GraphTracerUtils:
    """ttnn's helpers for a captured graph's arguments (static methods)."""

    @staticmethod
    def replace_control_chars(value: str) -> str:
        """``value`` with each control character (U+0000..U+001F) written as ``\\u00XX``."""
        return re.sub(r"[\x00-\x1f]", lambda m: f"\\u{ord(m.group()):04X}", value)

    @staticmethod
    def serialize_arguments_to_json(operation_name: str, arguments: Iterable[str]) -> dict | None:
        """``{"operation": name, "arguments": [{"arg<i>": value}, ...]}`` (None for an unnamed operation)."""
        if operation_name == "":
            return None
        serialized: list[object] = []
        for i, argument in enumerate(arguments):
            try:
                serialized.append({f"arg{i}": read_argument(argument)})
            except (ValueError, IndexError) as error:
                serialized.append({"UnparsedElement": {"error": error, "element_info": argument}})
        return {"operation": operation_name, "arguments": serialized}

    @staticmethod
    def serialize_graph(captured_graph: Iterable[Mapping]) -> dict[str, list]:
        """``{"content": [...]}``: each node with arguments, serialized (in the graph's order)."""
        content = []
        for node in captured_graph:
            arguments = node.get("arguments")
            if arguments:
                name = node.get("params", {}).get("name", "")
                content.append(GraphTracerUtils.serialize_arguments_to_json(name, arguments))
        return {"content": content}
