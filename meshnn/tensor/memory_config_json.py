"""``ttnn.MemoryConfig.to_json`` / ``from_json``: tt-metal's own form of a memory config,
``{"buffer_type": <int>, "created_with_nd_shard_spec": <bool>, "memory_layout": <int>}`` plus
``"shard_spec"`` (made with a 2-D spec) or ``"nd_shard_spec"`` (made with an N-D one) when there
is one.  Reading one back makes the config the way its ``created_with_nd_shard_spec`` says:
``MemoryConfig(buffer_type, nd_shard_spec)`` or ``MemoryConfig(memory_layout, buffer_type,
shard_spec)``, so a config equals the one read back from its text.

Layer: tensor.  Imports errors, device and the memory config.
"""

from __future__ import annotations

from meshnn.device import json_forms
from meshnn.device.buffer import BufferType, TensorMemoryLayout
from meshnn.errors import MeshnnValueError
from meshnn.tensor.memory_config import MemoryConfig


def memory_config_form(config: MemoryConfig) -> dict:
    """tt-metal's JSON object of ``config`` (enums as their integer values)."""
    form: dict = {
        "memory_layout": config.memory_layout.value,
        "buffer_type": config.buffer_type.value,
        "created_with_nd_shard_spec": config.created_with_nd_shard_spec,
    }
    if config.created_with_nd_shard_spec:
        if config.given_nd_shard_spec is not None:
            form["nd_shard_spec"] = json_forms.nd_shard_spec_form(config.given_nd_shard_spec)
    elif config.shard_spec is not None:
        form["shard_spec"] = json_forms.shard_spec_form(config.shard_spec)
    return form


def to_json(config: MemoryConfig) -> str:
    """The compact JSON text of ``config``, keys sorted (what ttnn's ``to_json`` returns)."""
    return json_forms.dumps(memory_config_form(config))


def from_json(text: object) -> MemoryConfig:
    """The memory config of a JSON text :func:`to_json` (or ttnn) wrote."""
    form = json_forms.loads(text, "MemoryConfig")
    layout = json_forms.enum_of(
        TensorMemoryLayout, json_forms.key(form, "memory_layout", "MemoryConfig"), "memory_layout"
    )
    buffer_type = json_forms.enum_of(BufferType, json_forms.key(form, "buffer_type", "MemoryConfig"), "buffer_type")
    nd = json_forms.key(form, "created_with_nd_shard_spec", "MemoryConfig")
    if not isinstance(nd, bool):
        raise MeshnnValueError(f"MemoryConfig JSON's created_with_nd_shard_spec must be a bool, got {nd!r}")
    if nd:
        spec = json_forms.nd_shard_spec_from(json_forms.key(form, "nd_shard_spec", "MemoryConfig"))
        return MemoryConfig(buffer_type, spec)
    shard = form.get("shard_spec")
    return MemoryConfig(layout, buffer_type, None if shard is None else json_forms.shard_spec_from(shard))
