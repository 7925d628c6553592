"""tt-run's rank-binding YAML (the schema of tt-metal's ``tt-run``) and each rank's environment.

A rank binding file holds ``rank_bindings`` (a list, at least one: ``rank`` >= 0, ``mesh_id`` >= 0,
optional ``mesh_host_rank`` >= 0, ``env_overrides`` (str -> str), optional ``mesh_graph_desc_path``),
``global_env`` (str -> str) and ``mesh_graph_desc_path`` (a file; relative paths are looked for
under ``$TT_METAL_HOME``, then the launch directory, then the current directory).  Ranks are unique
and contiguous from 0.  Every check raises ``ValueError`` naming the field, as tt-metal's does.

Each rank gets ``TT_MESH_ID``, ``TT_MESH_GRAPH_DESC_PATH``, ``TT_MESH_HOST_RANK`` (when given),
``TT_RUN_RANK``, ``TT_RUN_ORIGINAL_CWD`` and tt-metal's passthrough of the launcher's ``TT_*``,
``TTNN_*``, ``MESH_*``... variables, then ``global_env``, then its ``env_overrides``
(``$VAR`` expanded).

May import: :mod:`meshnn.errors` and PyYAML.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path

ORIGINAL_CWD = Path.cwd().resolve()
"""The directory tt-run was launched from (relative paths resolve against it)."""

DEFAULT_LD_LIBRARY_PATH = "{home}/build/lib"

ENV_PASSTHROUGH_PREFIXES = ("TT_", "ARCH_", "WH_", "TTNN_", "DEEPSEEK_", "MESH_", "MESHNN_")
"""Launcher variables every rank inherits (tt-metal's prefixes, and meshnn's own settings)."""

ENV_BLOCKLIST = frozenset(
    {
        "TT_MESH_ID",
        "TT_MESH_HOST_RANK",
        "TT_MESH_GRAPH_DESC_PATH",
        "TT_RUN_ORIGINAL_CWD",
        "TT_RUN_SUBCONTEXT_ID",
        "TT_RUN_SUBCONTEXT_SIZES",
        "TT_METAL_MOCK_CLUSTER_DESC_PATH",
        "TT_VISIBLE_DEVICES",
    }
)
"""Variables set per rank by tt-run (never inherited from the launcher)."""


def _int_field(entry: dict, name: str, where: str, *, minimum: int, required: bool) -> int | None:
    value = entry.get(name)
    if value is None:
        if required:
            raise ValueError(f"Invalid configuration: {where}.{name} is required")
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"Invalid configuration: {where}.{name} must be an int >= {minimum}, got {value!r}")
    return value


def _env_field(value: object, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"Invalid configuration: {where} must be a mapping of names to strings, got {value!r}")
    env = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key or "=" in key:
            raise ValueError(f"Invalid configuration: {where} has a bad variable name {key!r}")
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise ValueError(f"Invalid configuration: {where}[{key!r}] must be a string, got {item!r}")
        env[key] = str(item)
    return env


@dataclass(frozen=True)
class RankBinding:
    """One MPI rank's place: the mesh it opens (``mesh_id``) and its host rank within that mesh."""

    rank: int
    mesh_id: int
    mesh_host_rank: int | None = None
    env_overrides: dict[str, str] = field(default_factory=dict)
    subcontext_id: int | None = None
    subcontext_size: int | None = None
    mesh_graph_desc_path: Path | None = None

    @classmethod
    def from_yaml(cls, entry: object, index: int) -> RankBinding:
        where = f"rank_bindings[{index}]"
        if not isinstance(entry, dict):
            raise ValueError(f"Invalid configuration: {where} must be a mapping, got {entry!r}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(entry) - known)
        if unknown:
            raise ValueError(f"Invalid configuration: {where} has unknown field(s) {unknown}")
        mesh = entry.get("mesh_graph_desc_path")
        return cls(
            rank=_int_field(entry, "rank", where, minimum=0, required=True),  # type: ignore[arg-type]
            mesh_id=_int_field(entry, "mesh_id", where, minimum=0, required=True),  # type: ignore[arg-type]
            mesh_host_rank=_int_field(entry, "mesh_host_rank", where, minimum=0, required=False),
            env_overrides=_env_field(entry.get("env_overrides"), f"{where}.env_overrides"),
            subcontext_id=_int_field(entry, "subcontext_id", where, minimum=0, required=False),
            subcontext_size=_int_field(entry, "subcontext_size", where, minimum=1, required=False),
            mesh_graph_desc_path=None
            if mesh in (None, "")
            else resolve_path(mesh, description="Per-rank mesh graph descriptor", must_be_file=True),
        )


@dataclass(frozen=True)
class TTRunConfig:
    """A rank binding file, checked: bindings (unique ranks 0..N-1), the environment of every
    rank, the mesh graph descriptor, and the mock cluster descriptors by rank (may be empty)."""

    rank_bindings: list[RankBinding]
    mesh_graph_desc_path: Path
    global_env: dict[str, str] = field(default_factory=dict)
    mock_cluster_rank_binding: dict[int, Path] = field(default_factory=dict)

    @classmethod
    def from_yaml(cls, data: object, *, skip_mgd_check: bool = False) -> TTRunConfig:
        if not isinstance(data, dict):
            raise ValueError(f"Invalid configuration: the file must hold a mapping, got {type(data).__name__}")
        unknown = sorted(set(data) - {"rank_bindings", "global_env", "mesh_graph_desc_path"})
        if unknown:
            raise ValueError(f"Invalid configuration: unknown field(s) {unknown}")
        entries = data.get("rank_bindings")
        if not isinstance(entries, list) or not entries:
            raise ValueError("Invalid configuration: rank_bindings must be a non-empty list")
        bindings = [RankBinding.from_yaml(entry, i) for i, entry in enumerate(entries)]
        ranks = [b.rank for b in bindings]
        if len(ranks) != len(set(ranks)):
            raise ValueError(f"Invalid configuration: Duplicate ranks found in bindings: {ranks}")
        if sorted(ranks) != list(range(len(ranks))):
            raise ValueError(f"Invalid configuration: Ranks must be contiguous from 0. Got: {sorted(ranks)}")
        mesh = data.get("mesh_graph_desc_path")
        if not isinstance(mesh, str | Path) or not str(mesh):
            raise ValueError("Invalid configuration: mesh_graph_desc_path (a file path) is required")
        path = resolve_path(mesh, description="Mesh graph descriptor", must_be_file=True, must_exist=not skip_mgd_check)
        return cls(bindings, path, _env_field(data.get("global_env"), "global_env"))


def get_search_paths() -> list[Path | None]:
    """Where a relative path is looked for, in order: ``$TT_METAL_HOME``, the launch directory,
    the current directory (None: ``TT_METAL_HOME`` unset)."""
    home = os.environ.get("TT_METAL_HOME")
    return [Path(home).expanduser() if home else None, ORIGINAL_CWD, Path.cwd()]


def resolve_path(
    path: str | Path, description: str = "file", must_exist: bool = True, must_be_file: bool = False
) -> Path:
    """``path`` made absolute: as given when absolute, else the first search path holding it;
    ``ValueError`` ("... not found") when ``must_exist`` and nothing matches."""
    given = Path(path).expanduser()
    present = Path.is_file if must_be_file else Path.exists
    if given.is_absolute():
        resolved = given.resolve()
        if must_exist and not present(resolved):
            raise ValueError(f"{description} not found: {resolved}")
        return resolved
    searched = [base for base in get_search_paths() if base is not None]
    for base in searched:
        candidate = (base / given).resolve()
        if present(candidate):
            return candidate
    if must_exist:
        raise ValueError(
            f"{description} not found: {path} (searched in {[str(b) for b in searched]}); "
            "use an absolute path or one relative to the launch directory"
        )
    return (ORIGINAL_CWD / given).resolve()


def load_mock_rank_to_descriptors(resolved_config_path: Path) -> dict[int, Path]:
    """Rank -> mock cluster descriptor: the file's ``rank_to_cluster_mock_cluster_desc`` mapping,
    or the file itself for rank 0 when it holds no such mapping."""
    import yaml

    with open(resolved_config_path) as f:
        data = yaml.safe_load(f)
    if not (isinstance(data, dict) and "rank_to_cluster_mock_cluster_desc" in data):
        return {0: resolved_config_path}
    mapping = data["rank_to_cluster_mock_cluster_desc"]
    if not isinstance(mapping, dict):
        raise ValueError("rank_to_cluster_mock_cluster_desc must map ranks to descriptor files")
    return {
        int(rank): resolve_path(path, description=f"Mock cluster descriptor for rank {rank}", must_be_file=True)
        for rank, path in mapping.items()
    }


def parse_binding_config(
    yaml_path: Path, mock_cluster_rank_binding: Path | None = None, skip_mgd_check: bool = False
) -> TTRunConfig:
    """The rank binding file at ``yaml_path``, checked (``ValueError`` naming what is wrong)."""
    import yaml

    resolved = resolve_path(yaml_path, description="Configuration file", must_be_file=True)
    try:
        with open(resolved) as f:
            data = yaml.safe_load(f)
    except yaml.YAMLError as error:
        raise ValueError(f"Invalid configuration: {resolved} is not YAML ({error})") from None
    config = TTRunConfig.from_yaml(data, skip_mgd_check=skip_mgd_check)
    if mock_cluster_rank_binding:
        mock = resolve_path(
            mock_cluster_rank_binding, description="Mock cluster rank binding configuration", must_be_file=True
        )
        config = dataclasses.replace(config, mock_cluster_rank_binding=load_mock_rank_to_descriptors(mock))
        missing = sorted(b.rank for b in config.rank_bindings if b.rank not in config.mock_cluster_rank_binding)
        if missing:
            raise ValueError(f"Mock cluster rank binding names no descriptor for rank(s) {missing}")
    return config


def parent_environment() -> dict[str, str]:
    """The launcher's variables every rank inherits (passthrough prefixes, less the blocklist)."""
    return {k: v for k, v in os.environ.items() if k.startswith(ENV_PASSTHROUGH_PREFIXES) and k not in ENV_BLOCKLIST}


def get_rank_environment(
    binding: RankBinding,
    config: TTRunConfig,
    *,
    parent_env_prefix: dict[str, str] | None = None,
    extra_env: dict[str, str] | None = None,
) -> dict[str, str]:
    """Every variable tt-run sets for ``binding``'s rank (see the module's text)."""
    env = dict(parent_environment() if parent_env_prefix is None else parent_env_prefix)
    home = os.environ.get("TT_METAL_HOME", str(ORIGINAL_CWD))
    mesh = binding.mesh_graph_desc_path or config.mesh_graph_desc_path
    env.update(
        {
            "TT_MESH_ID": str(binding.mesh_id),
            "TT_MESH_GRAPH_DESC_PATH": str(mesh),
            "TT_METAL_HOME": home,
            "TT_METAL_RUNTIME_ROOT": os.environ.get("TT_METAL_RUNTIME_ROOT", home),
            "PYTHONPATH": os.environ.get("PYTHONPATH", str(ORIGINAL_CWD)),
            "LD_LIBRARY_PATH": os.environ.get("LD_LIBRARY_PATH", DEFAULT_LD_LIBRARY_PATH.format(home=ORIGINAL_CWD)),
            "TT_RUN_ORIGINAL_CWD": str(ORIGINAL_CWD),
            "TT_RUN_RANK": str(binding.rank),
        }
    )
    for name in ("HOME", "USER", "PATH", "VIRTUAL_ENV", "PYTHONHOME"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    if binding.mesh_host_rank is not None:
        env["TT_MESH_HOST_RANK"] = str(binding.mesh_host_rank)
    if binding.subcontext_id is not None:
        env["TT_RUN_SUBCONTEXT_ID"] = str(binding.subcontext_id)
    if config.mock_cluster_rank_binding:
        env["TT_METAL_MOCK_CLUSTER_DESC_PATH"] = str(config.mock_cluster_rank_binding[binding.rank])
    env.update({k: os.path.expandvars(v) for k, v in config.global_env.items()})
    env.update({k: os.path.expandvars(v) for k, v in binding.env_overrides.items()})
    env.update(extra_env or {})
    return env


def _overlay(value: object, folder: Path, skip_mgd_check: bool) -> TTRunConfig:
    if not isinstance(value, str | Path):
        raise ValueError(f"a sub-context's rank binding must be a file path, got {value!r}")
    beside = folder / value
    path = beside.resolve() if not Path(value).is_absolute() and beside.is_file() else Path(value)
    return parse_binding_config(path, None, skip_mgd_check=skip_mgd_check)


def parse_rank_bindings_mapping(
    mapping_yaml_path: Path, mock_cluster_rank_binding: Path | None = None, skip_mgd_check: bool = False
) -> TTRunConfig:
    """``subcontext_id_to_rank_bindings`` (ids 0, 1, ... -> rank binding files, relative paths
    beside the mapping first) merged into one run: sub-context ``s``'s ranks follow those of the
    ones before it, each keeping its own mesh graph descriptor, ``TT_RUN_SUBCONTEXT_ID`` and the
    sizes in ``TT_RUN_SUBCONTEXT_SIZES``; global environments must agree."""
    import yaml

    resolved = resolve_path(mapping_yaml_path, description="Rank bindings mapping file", must_be_file=True)
    data = yaml.safe_load(resolved.read_text())
    table = data.get("subcontext_id_to_rank_bindings") if isinstance(data, dict) else None
    if not isinstance(table, dict) or not table:
        raise ValueError("Rank bindings mapping must contain a non-empty 'subcontext_id_to_rank_bindings' mapping")
    if [k for k in table] != list(range(len(table))):
        raise ValueError(f"subcontext_id_to_rank_bindings keys must be 0, 1, ... in order, got {list(table)}")
    bindings: list[RankBinding] = []
    env: dict[str, str] = {}
    first: Path | None = None
    for sub in table:
        part = _overlay(table[sub], resolved.parent, skip_mgd_check)
        first = first or part.mesh_graph_desc_path
        clash = sorted(k for k, v in part.global_env.items() if env.get(k, v) != v)
        if clash:
            raise ValueError(f"global_env conflict on {clash} between sub-contexts")
        env |= part.global_env
        size = len(part.rank_bindings)
        for b in sorted(part.rank_bindings, key=lambda b: b.rank):
            bindings.append(
                dataclasses.replace(
                    b,
                    rank=len(bindings),
                    subcontext_id=sub,
                    subcontext_size=size,
                    mesh_graph_desc_path=part.mesh_graph_desc_path,
                )
            )
    sizes = {b.subcontext_id: b.subcontext_size for b in bindings}
    env["TT_RUN_SUBCONTEXT_SIZES"] = ",".join(str(sizes[s]) for s in table)
    config = TTRunConfig(bindings, first, env)  # type: ignore[arg-type]
    if mock_cluster_rank_binding:
        mock = resolve_path(mock_cluster_rank_binding, description="Mock cluster rank binding", must_be_file=True)
        config = dataclasses.replace(config, mock_cluster_rank_binding=load_mock_rank_to_descriptors(mock))
    return config
