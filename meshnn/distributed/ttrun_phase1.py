"""tt-run's new mode, Phase 1: from a mesh graph descriptor and hosts (or mock cluster descriptors)
to a rank binding file and a rankfile, cached under ``generated/ttrun/<id>`` of the launch directory
(the id: a SHA-256 prefix of the descriptor's bytes and the sorted hosts, or of each mock
descriptor's bytes).

tt-metal discovers the machines with its ``generate_rank_bindings`` tool, run under ``mpirun``
(one process per host).  meshnn has no machines to discover: its own generator
(``meshnn-generate-rank-bindings``, used when tt-metal's is not built) gives every mesh instance of
the descriptor one rank per host rank of the mesh, in mesh-id order, placed on the hosts in turn.

May import: :mod:`meshnn.distributed.ttrun_config`, :mod:`meshnn.distributed.ttrun_mpi`,
:mod:`meshnn.distributed.mesh_graph`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

from meshnn.distributed import ttrun_config
from meshnn.distributed.mesh_graph import read_mesh_graph
from meshnn.distributed.ttrun_mpi import (
    get_mpi_launcher,
    host_list_needs_oversubscribe,
    launcher_is_mpich,
    parse_rankfile,
    to_launcher_dialect,
)

PHASE1_CACHE_ID_HEX_LEN = 16
PHASE1_CACHE_KEY_FILENAME = ".phase1_cache_key"
PHASE2_MOCK_MAPPING_FILENAME = "phase2_mock_mapping.yaml"
GENERATOR = "meshnn-generate-rank-bindings"
_RUN = subprocess.run  # the real one: only a real run is translated for MPICH


def get_generate_rank_bindings_output_paths(output_dir: Path) -> tuple[Path, Path]:
    """``(output_dir/rank_bindings.yaml, output_dir/rankfile)``."""
    return output_dir / "rank_bindings.yaml", output_dir / "rankfile"


def find_generate_rank_bindings_executable() -> Path:
    """tt-metal's ``build/tools/scaleout/generate_rank_bindings`` (under ``$TT_METAL_HOME``, the
    launch directory or the current one), else meshnn's generator; ``FileNotFoundError`` if none."""
    bases = [os.environ.get("TT_METAL_HOME"), ttrun_config.ORIGINAL_CWD, Path()]
    for base in bases:
        if base:
            candidate = Path(base) / "build" / "tools" / "scaleout" / "generate_rank_bindings"
            if candidate.exists():
                return candidate.resolve()
    found = shutil.which(GENERATOR)
    if found:
        return Path(found).resolve()
    raise FileNotFoundError(
        "generate_rank_bindings executable not found: searched $TT_METAL_HOME/build/tools/scaleout, "
        f"{ttrun_config.ORIGINAL_CWD}/build/tools/scaleout, build/tools/scaleout and {GENERATOR} on PATH"
    )


def compute_phase1_cache_fingerprint_full(
    mgd_path: Path, hosts: list[str] | None, mock_rank_to_desc: dict[int, Path] | None
) -> str:
    """SHA-256 hex of the descriptor's bytes and the hosts (or each mock descriptor's bytes)."""
    if (hosts is None) == (mock_rank_to_desc is None):
        raise ValueError("Either hosts or mock_rank_to_desc is required (and they are mutually exclusive)")
    digest = hashlib.sha256(Path(mgd_path).read_bytes() + b"\0")
    if hosts is not None:
        digest.update(json.dumps(hosts, separators=(",", ":"), ensure_ascii=False).encode())
    else:
        for rank in sorted(mock_rank_to_desc):  # type: ignore[union-attr]
            digest.update(f"{rank}\0".encode())
            digest.update(hashlib.sha256(Path(mock_rank_to_desc[rank]).read_bytes()).digest())  # type: ignore[index]
    return digest.hexdigest()


def compute_phase1_cache_id(mgd_path: Path, hosts: list[str] | None, mock_rank_to_desc: dict[int, Path] | None) -> str:
    """The cache folder's name: the fingerprint's first ``PHASE1_CACHE_ID_HEX_LEN`` hex digits."""
    return compute_phase1_cache_fingerprint_full(mgd_path, hosts, mock_rank_to_desc)[:PHASE1_CACHE_ID_HEX_LEN]


def read_stored_phase1_cache_key(run_dir: Path) -> str | None:
    key = run_dir / PHASE1_CACHE_KEY_FILENAME
    text = key.read_text().strip() if key.is_file() else ""
    return text or None


def write_phase1_cache_key_file(run_dir: Path, fingerprint_full: str) -> None:
    """Write the fingerprint atomically (a temporary file renamed)."""
    temporary = run_dir / f"{PHASE1_CACHE_KEY_FILENAME}.tmp"
    temporary.write_text(fingerprint_full + "\n", encoding="utf-8")
    temporary.replace(run_dir / PHASE1_CACHE_KEY_FILENAME)


def write_phase1_openmpi_hostfile(hostfile_path: Path, hosts_sorted: list[str]) -> None:
    """An Open MPI hostfile: ``host slots=1`` per line, in the order given."""
    hostfile_path.write_text("".join(f"{h} slots=1\n" for h in hosts_sorted))


def phase1_outputs_ready(run_dir: Path, mock_mode: bool) -> bool:
    """True when ``run_dir`` holds non-empty Phase 1 outputs (and, mocked, the Phase 2 mapping)."""
    needed = [*get_generate_rank_bindings_output_paths(run_dir)]
    needed += [run_dir / PHASE2_MOCK_MAPPING_FILENAME] if mock_mode else []
    return all(p.is_file() and p.stat().st_size > 0 for p in needed)


def phase1_cache_hit_valid(run_dir: Path, fingerprint_full: str, mock_mode: bool) -> bool:
    return phase1_outputs_ready(run_dir, mock_mode) and read_stored_phase1_cache_key(run_dir) == fingerprint_full


def build_generate_rank_bindings_mpi_cmd(
    executable: Path,
    mgd_path: Path,
    hosts: list[str] | None,
    output_dir: Path,
    mock_rank_to_desc: dict[int, Path] | None = None,
    mpi_args: list[str] | None = None,
) -> list[str]:
    """tt-metal's Phase 1 ``mpirun`` command: one process per host (``--host``, ``-np``), or one
    ``-np 1`` segment per mock descriptor."""
    ld_path = os.environ.get("LD_LIBRARY_PATH", f"{ttrun_config.ORIGINAL_CWD}/build/lib")
    cmd = [get_mpi_launcher(), "--tag-output", "-x", f"LD_LIBRARY_PATH={ld_path}", *(mpi_args or [])]
    tool = [str(Path(executable).resolve()), "--mesh-graph-descriptor", str(Path(mgd_path).resolve())]
    tool += ["--output-dir", str(Path(output_dir).resolve())]
    if mock_rank_to_desc:
        cmd.append("--oversubscribe")
        for i, rank in enumerate(sorted(mock_rank_to_desc)):
            cmd += [":"] if i else []
            cmd += ["-np", "1", "-x", f"TT_METAL_MOCK_CLUSTER_DESC_PATH={Path(mock_rank_to_desc[rank]).resolve()}"]
            cmd += tool
        return cmd
    if not hosts:
        raise ValueError("Either hosts or mock_rank_to_desc must be provided")
    if host_list_needs_oversubscribe(hosts) and "--oversubscribe" not in (mpi_args or []):
        cmd.append("--oversubscribe")
    return [*cmd, "--host", ",".join(hosts), "-np", str(len(hosts)), *tool]


def run_phase1_generate_rank_bindings(
    mgd_path: Path,
    hosts: list[str] | None,
    output_dir: Path,
    subprocess_run=subprocess.run,
    mock_rank_to_desc: dict[int, Path] | None = None,
    mpi_args: list[str] | None = None,
) -> tuple[Path, Path]:
    """Run Phase 1 into ``output_dir``; its two outputs, or ``RuntimeError`` naming what failed."""
    cmd = build_generate_rank_bindings_mpi_cmd(
        find_generate_rank_bindings_executable(), mgd_path, hosts, output_dir, mock_rank_to_desc, mpi_args
    )
    if subprocess_run is _RUN and launcher_is_mpich(cmd[0]):
        cmd = to_launcher_dialect(cmd)[0]
    done = subprocess_run(cmd, cwd=str(ttrun_config.ORIGINAL_CWD))
    if done.returncode != 0:
        raise RuntimeError(f"generate_rank_bindings failed with exit code {done.returncode}")
    outputs = get_generate_rank_bindings_output_paths(output_dir)
    missing = [str(p) for p in outputs if not p.is_file()]
    if missing:
        raise RuntimeError(f"generate_rank_bindings finished but did not write {missing}")
    return outputs


def write_rank_bindings(mgd_path: Path, output_dir: Path, hosts: list[str]) -> tuple[Path, Path]:
    """meshnn's generator: one rank per (mesh instance, host rank), mesh ids in order, the ranks
    placed on ``hosts`` in turn; writes the rank binding file and the rankfile."""
    import yaml

    bindings, lines = [], []
    for mesh in sorted(read_mesh_graph(mgd_path).values(), key=lambda m: m.mesh_id):
        for host_rank in range(mesh.host_ranks):
            rank = len(bindings)
            bindings.append({"rank": rank, "mesh_id": mesh.mesh_id, "mesh_host_rank": host_rank})
            lines.append(f"rank {rank}={hosts[rank % len(hosts)]} slot={rank}\n")
    output_dir.mkdir(parents=True, exist_ok=True)
    document = {"rank_bindings": bindings, "mesh_graph_desc_path": str(Path(mgd_path).resolve())}
    paths = get_generate_rank_bindings_output_paths(output_dir)
    paths[0].write_text(yaml.safe_dump(document, sort_keys=False))
    paths[1].write_text("".join(lines))
    return paths


def generator_main(argv: list[str] | None = None) -> int:
    """``meshnn-generate-rank-bindings --mesh-graph-descriptor F --output-dir D``: rank 0 of the
    Phase 1 job writes the outputs (the other processes only check the descriptor)."""
    parser = argparse.ArgumentParser(prog=GENERATOR, description=write_rank_bindings.__doc__)
    parser.add_argument("--mesh-graph-descriptor", required=True, type=Path)
    parser.add_argument("--output-dir", required=True, type=Path)
    args = parser.parse_args(argv)
    read_mesh_graph(args.mesh_graph_descriptor)
    if int(os.environ.get("PMI_RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0"))) == 0:
        write_rank_bindings(args.mesh_graph_descriptor, args.output_dir, ["localhost"])
    return 0


def build_phase2_mock_mapping(
    rankfile_path: Path, phase1_hosts: list[str] | None, phase1_mock_rank_to_desc: dict[int, Path] | None
) -> dict[int, Path] | None:
    """Phase 2 rank -> mock cluster descriptor (None without mocks): a rank gets the descriptor of
    the first Phase 1 rank on its host (rank 0's when its host was not in Phase 1); without Phase 1
    hosts, Phase 2 rank r gets Phase 1 rank ``r mod n``'s."""
    if not phase1_mock_rank_to_desc:
        return None
    placed = parse_rankfile(rankfile_path)
    if not phase1_hosts:
        count = len(phase1_mock_rank_to_desc)
        return {r: phase1_mock_rank_to_desc[r % count] for r in sorted(placed) if r % count in phase1_mock_rank_to_desc}
    first = {}
    for rank, host in enumerate(phase1_hosts):
        first.setdefault(host, rank)
    mapping = {}
    for rank, host in placed.items():
        source = first.get(host, 0)
        if source in phase1_mock_rank_to_desc:
            mapping[rank] = phase1_mock_rank_to_desc[source]
    return mapping
