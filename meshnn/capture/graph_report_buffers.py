"""``buffer_chunks`` of an imported graph report: buffer pages folded by buffer, bank and core.

A chunk is the pages of one buffer (device, address, buffer type) on one bank and core: its
first page's address, the bytes up to the end of its last page, the largest page size and the
number of pages.  A report's pages come as ``buffer_pages_by_address`` (each address's pages at
each allocation, by the allocation's node counter) with ``per_operation_buffers`` (each
operation's live buffers: their pages as last allocated before the operation ended), or as one
flat ``buffer_pages`` list (the pages at the end of the capture, given to the report's first
operation).

Layers: the capture layer only.
"""

from __future__ import annotations

import bisect

_PAGE_KEYS = ("device_id", "address", "core_y", "core_x", "bank_id", "page_index", "page_address", "page_size")


def _page(row: dict) -> tuple:
    return (*(int(row.get(k, 0)) for k in _PAGE_KEYS), int(row.get("buffer_type", 0)))


def chunks(operation_id: int, pages: list[tuple]) -> list[tuple]:
    """The chunks (rows without rank) of one operation's pages."""
    groups: dict[tuple, list[int]] = {}
    for device, address, core_y, core_x, bank, _, page_address, page_size, kind in pages:
        key = (device, address, bank, core_x, core_y, kind)
        end = page_address + page_size
        group = groups.get(key)
        if group is None:
            groups[key] = [page_address, end, page_size, 1]
        else:
            group[0], group[1] = min(group[0], page_address), max(group[1], end)
            group[2], group[3] = max(group[2], page_size), group[3] + 1
    return [
        (operation_id, device, address, bank, core_x, core_y, start, end - start, size, count, kind)
        for (device, address, bank, core_x, core_y, kind), (start, end, size, count) in groups.items()
    ]


def _ends(graph: list) -> dict[int, int]:
    ends, open_starts = {}, []
    for node in graph:
        if node.get("node_type") == "function_start":
            open_starts.append(node.get("counter", 0))
        elif node.get("node_type") == "function_end" and open_starts:
            ends[open_starts.pop()] = node.get("counter", 0)
    return ends


def buffer_chunk_rows(report: dict, operations: dict[int, int], base: int) -> list[tuple]:
    """Every ``buffer_chunks`` row (without rank) of a report; ``operations``: function_start
    counter -> operation id of the imported graph."""
    by_address, per_op = report.get("buffer_pages_by_address"), report.get("per_operation_buffers")
    if by_address and per_op:
        timelines = {}
        for address, snapshots in by_address.items():
            timeline = sorted((s.get("alloc_counter", 0), [_page(p) for p in s.get("pages", [])]) for s in snapshots)
            timelines[int(address)] = timeline
        ends, rows = _ends(report.get("graph", [])), []
        for start, buffers in per_op.items():
            operation = operations.get(int(start))
            if operation is None:
                continue
            pages = []
            for buffer in buffers:
                timeline = timelines.get(int(buffer.get("address", 0)), [])
                at = bisect.bisect_right([t[0] for t in timeline], ends.get(int(start), int(start))) - 1
                pages.extend(timeline[max(at, 0)][1] if timeline else [])
            rows.extend(chunks(operation, pages))
        return rows
    flat = report.get("buffer_pages") or []
    if not flat:
        return []
    first = min(operations.values()) if operations else base
    return chunks(first, [_page(p) for p in flat])
