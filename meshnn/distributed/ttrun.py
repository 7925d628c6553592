"""``tt-run`` (``ttnn.distributed.ttrun``): tt-metal's launcher of multi-process TTNN programs.

Legacy mode (``--rank-binding FILE``): each rank of the binding file (see
:mod:`meshnn.distributed.ttrun_config`) is started by one ``mpirun`` with its own environment
(``TT_MESH_ID``, ``TT_MESH_GRAPH_DESC_PATH``...); under meshnn each rank then opens its own mesh,
the descriptor's mesh ``TT_MESH_ID`` names.  New mode (``--mesh-graph-descriptor FILE`` with
``--hosts`` or ``--mock-cluster-rank-binding``) first makes the binding file (Phase 1,
:mod:`meshnn.distributed.ttrun_phase1`), then runs legacy mode on it (Phase 2).

The options are tt-metal's, checked as tt-metal checks them.  Those that only matter on a cluster
(``--hosts``, ``--tcp-interface``, ``--bare``, ``--rankfile-syntax``, ``--tracy``, rankfiles and MCA
settings in ``--mpi-args``) are accepted, checked, and reported on stderr when the launch leaves
them out: with MPICH's ``mpirun`` (meshnn's ``pip install mpich``) every rank runs on this machine.
``--dry-run`` prints tt-metal's command (and the one MPICH would run) without running anything.

May import: :mod:`meshnn.distributed.ttrun_config`, :mod:`meshnn.distributed.ttrun_mpi`,
:mod:`meshnn.distributed.ttrun_phase1`; click and PyYAML (the ``mpi`` extra).
"""

from __future__ import annotations

import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import click

from meshnn.distributed.ttrun_config import (
    ORIGINAL_CWD,
    RankBinding,
    TTRunConfig,
    get_rank_environment,
    get_search_paths,
    load_mock_rank_to_descriptors,
    parse_binding_config,
    parse_rank_bindings_mapping,
    resolve_path,
)
from meshnn.distributed.ttrun_mpi import (
    RankfileSyntax,
    build_host_slots_from_rankfile,
    build_mpi_command,
    build_rankfile_args,
    detect_rankfile_syntax,
    ensure_oversubscribe_for_multi_proc_per_host,
    get_mpi_launcher,
    has_host_selection_args,
    has_mca_param,
    host_csv_needs_oversubscribe,
    inject_rankfile_mpi_args,
    launcher_is_mpich,
    mpi_args_contain_rankfile_options,
    mpi_args_specify_bind_to,
    normalize_rankfile_mpi_args,
    parse_rankfile,
    rankfile_path_for_mpi_cli,
    to_launcher_dialect,
)
from meshnn.distributed.ttrun_phase1 import (
    PHASE1_CACHE_ID_HEX_LEN,
    PHASE2_MOCK_MAPPING_FILENAME,
    build_generate_rank_bindings_mpi_cmd,
    build_phase2_mock_mapping,
    compute_phase1_cache_fingerprint_full,
    compute_phase1_cache_id,
    find_generate_rank_bindings_executable,
    get_generate_rank_bindings_output_paths,
    phase1_cache_hit_valid,
    phase1_outputs_ready,
    read_stored_phase1_cache_key,
    run_phase1_generate_rank_bindings,
    write_phase1_cache_key_file,
    write_phase1_openmpi_hostfile,
)

__all__ = [
    "ORIGINAL_CWD",
    "PHASE1_CACHE_ID_HEX_LEN",
    "PHASE2_MOCK_MAPPING_FILENAME",
    "RankBinding",
    "RankfileSyntax",
    "TTRunConfig",
    "build_generate_rank_bindings_mpi_cmd",
    "build_host_slots_from_rankfile",
    "build_mpi_command",
    "build_phase2_mock_mapping",
    "build_rankfile_args",
    "compute_phase1_cache_fingerprint_full",
    "compute_phase1_cache_id",
    "detect_rankfile_syntax",
    "ensure_oversubscribe_for_multi_proc_per_host",
    "find_generate_rank_bindings_executable",
    "get_generate_rank_bindings_output_paths",
    "get_mpi_launcher",
    "get_rank_environment",
    "get_search_paths",
    "has_host_selection_args",
    "host_csv_needs_oversubscribe",
    "inject_rankfile_mpi_args",
    "legacy_flow",
    "main",
    "mpi_args_contain_rankfile_options",
    "mpi_args_specify_bind_to",
    "new_mode_flow",
    "normalize_rankfile_mpi_args",
    "parse_binding_config",
    "parse_rank_bindings_mapping",
    "parse_rankfile",
    "phase1_cache_hit_valid",
    "phase1_outputs_ready",
    "rankfile_path_for_mpi_cli",
    "read_stored_phase1_cache_key",
    "resolve_path",
    "run_phase1_generate_rank_bindings",
    "write_phase1_cache_key_file",
    "write_phase1_openmpi_hostfile",
]

TT_RUN_PREFIX = "[tt-run]"
INTERRUPTED_EXIT_CODE = 130
STALE_CACHE_HINT = (
    "if the run failed during discovery or files are missing, the Phase 1 cache may be stale: "
    "retry with --force-rediscovery"
)


def _say(message: str) -> None:
    click.echo(f"{TT_RUN_PREFIX} {message}", err=True)


def _parse_hosts_option(ctx: click.Context, param: click.Parameter, value: str | None) -> list[str] | None:
    """``--hosts a,b,c``: empty segments dropped; duplicates, flags, spaces and control characters refused."""
    if not value:
        return None
    hosts = [h.strip() for h in value.split(",") if h.strip()]
    if not hosts:
        raise click.ClickException("No valid hostnames in --hosts (e.g. avoid ',,,'). Example: --hosts node1,node2")
    for i, host in enumerate(hosts):
        if host in hosts[:i]:
            raise click.ClickException(f"Duplicate hostname in --hosts: {host!r}")
        if host.startswith("-"):
            raise click.ClickException(f"Invalid hostname in --hosts: {host!r} looks like a command-line flag")
        if any(c in host for c in "\n\r\t"):
            raise click.ClickException(f"Invalid hostname in --hosts (no newlines/tabs): {host!r}")
        if " " in host:
            raise click.ClickException(
                f"Invalid hostname in --hosts (no spaces inside a host; commas between hosts): {host!r}"
            )
    return hosts


def _parse_rankfile_syntax_option(value: str) -> RankfileSyntax | None:
    choices = {"rankfile": RankfileSyntax.RANKFILE, "map-by": RankfileSyntax.MAP_BY_RANKFILE_FILE}
    return {**choices, "mca": RankfileSyntax.MCA_RMAPS_RANKFILE_PATH}.get(value)


def default_multihost_mpi_args(tcp_interface: str | None) -> list[str]:
    """tt-metal's multi-host MCA settings (TCP transport; the interface, or not docker0 and lo)."""
    if tcp_interface:
        return ["--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", tcp_interface]
    return ["--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_exclude", "docker0,lo"]


def _multihost_args(mpi_args: list[str], tcp_interface: str | None) -> list[str]:
    """The MCA settings tt-run adds unless ``--bare``, those the user set left alone."""
    added = [] if has_mca_param(mpi_args, "btl") else ["--mca", "btl", "self,tcp"]
    user_set = has_mca_param(mpi_args, "btl_tcp_if_include") or has_mca_param(mpi_args, "btl_tcp_if_exclude")
    if tcp_interface and not user_set:
        added += ["--mca", "btl_tcp_if_include", tcp_interface]
    elif not user_set:
        added += ["--mca", "btl_tcp_if_exclude", "docker0,lo"]
    return added + mpi_args


def _check_program(program: list[str], skip_executable_check: bool) -> None:
    if not program:
        raise click.ClickException("No program specified. Please provide a program to run.")
    if not skip_executable_check and not Path(program[0]).exists() and not shutil.which(program[0]):
        raise click.ClickException(f"Program not found: {program[0]}")


def _check_tracy(tracy_args: str | None) -> None:
    if tracy_args is None:
        return
    try:
        shlex.split(tracy_args)
    except ValueError as error:
        raise click.ClickException(f"--tracy: cannot split {tracy_args!r}: {error}") from None
    _say(f"--tracy {tracy_args!r} recorded: meshnn has no Tracy; use meshnn's perf capture (meshnn.perf)")


def _load_config(rank_binding, rank_bindings_mapping, mock_cluster_rank_binding, skip_mgd_check) -> TTRunConfig:
    try:
        if rank_bindings_mapping is not None:
            return parse_rank_bindings_mapping(rank_bindings_mapping, mock_cluster_rank_binding, skip_mgd_check)
        return parse_binding_config(rank_binding, mock_cluster_rank_binding, skip_mgd_check)
    except ValueError as error:
        raise click.ClickException(f"Configuration error: {error}") from None


def _launch(cmd: list[str], dry_run: bool, hint: str | None) -> None:
    """Print the command; unless ``dry_run``, run it (in MPICH's words when the launcher is MPICH's)
    and end tt-run with its status."""
    _say("Command: " + shlex.join(cmd))
    mpich = launcher_is_mpich(cmd[0])
    run_cmd, dropped = to_launcher_dialect(cmd) if mpich else (cmd, [])
    if dropped:
        _say(f"every rank runs on this machine (MPICH); recorded, not passed to mpiexec: {'; '.join(dropped)}")
    if dry_run:
        if mpich:
            _say("MPICH command: " + shlex.join(run_cmd))
        return
    try:
        status = subprocess.run(run_cmd, cwd=str(ORIGINAL_CWD)).returncode
    except KeyboardInterrupt:
        sys.exit(INTERRUPTED_EXIT_CODE)
    except OSError as error:
        raise click.ClickException(f"cannot start {run_cmd[0]}: {error}") from None
    if status != 0:
        _say(f"mpirun exited with status {status}" + (f"; {hint}" if hint else ""))
    sys.exit(status)


def _placement_args(args: list[str], rankfile: Path, syntax: RankfileSyntax, mocked: bool) -> list[str]:
    if mpi_args_contain_rankfile_options(args):
        _say("a rankfile is already in --mpi-args; the generated one is not added")
        return args
    hosts: list[str] = []
    if not mocked and not has_host_selection_args(args):  # Phase 2 on a cluster: the rankfile's hosts and slots
        slots, ranks = build_host_slots_from_rankfile(rankfile)
        hosts = ["--host", slots] if slots and ranks else []
    placed = hosts + build_rankfile_args(syntax, rankfile, cwd=ORIGINAL_CWD) + args
    return ensure_oversubscribe_for_multi_proc_per_host(placed, rankfile_hint=rankfile)


def legacy_flow(
    ctx: click.Context,
    rank_binding: Path | None = None,
    rank_bindings_mapping: Path | None = None,
    dry_run: bool = False,
    verbose: bool = False,
    mpi_args: list[str] | None = None,
    debug_gdbserver: bool = False,
    mock_cluster_rank_binding: Path | None = None,
    skip_executable_check: bool = False,
    skip_mgd_check: bool = False,
    bare: bool = False,
    tcp_interface: str | None = None,
    rankfile: Path | None = None,
    rankfile_syntax: RankfileSyntax | None = None,
    phase2_failure_hint: str | None = None,
    tracy_args: str | None = None,
) -> None:
    """Launch the program of ``ctx.args`` once per rank of the binding file (see the module's text)."""
    if (rank_binding is None) == (rank_bindings_mapping is None):
        raise click.ClickException("Specify exactly one of --rank-binding or --rank-bindings-mapping")
    config = _load_config(rank_binding, rank_bindings_mapping, mock_cluster_rank_binding, skip_mgd_check)
    program = list(ctx.args)
    _check_program(program, skip_executable_check)
    _check_tracy(tracy_args)
    if verbose:
        _say(f"launch directory {ORIGINAL_CWD}; mesh graph descriptor {config.mesh_graph_desc_path}")
    args = list(mpi_args or [])
    args = args if bare else _multihost_args(args, tcp_interface)
    syntax = rankfile_syntax or detect_rankfile_syntax(get_mpi_launcher())
    if rankfile is not None:
        args = _placement_args(args, rankfile, syntax, mock_cluster_rank_binding is not None)
    cmd = build_mpi_command(config, program, args, debug_gdbserver, syntax)
    hint = STALE_CACHE_HINT if phase2_failure_hint == "stale_phase1_cache" else None
    _launch(cmd, dry_run, hint)


def _mock_descriptors(mock_cluster_rank_binding: Path | None) -> dict[int, Path] | None:
    if mock_cluster_rank_binding is None:
        return None
    try:
        path = resolve_path(mock_cluster_rank_binding, description="Mock cluster rank binding", must_be_file=True)
        return load_mock_rank_to_descriptors(path)
    except (ValueError, OSError) as error:
        raise click.ClickException(f"Configuration error: {error}") from None


def _phase1(mgd: Path, hosts, mock, run_dir: Path, mpi_args, dry_run: bool) -> tuple[Path, Path] | None:
    """Run Phase 1 into ``run_dir`` (None in a dry run: nothing is run or written)."""
    if dry_run:
        _say(f"Dry-run: Phase 1 not run (its outputs would go to {run_dir}); Phase 2 needs them")
        return None
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        outputs = run_phase1_generate_rank_bindings(mgd, hosts, run_dir, mock_rank_to_desc=mock, mpi_args=mpi_args)
    except (FileNotFoundError, RuntimeError) as error:
        raise click.ClickException(f"Phase 1 (generate_rank_bindings) failed: {error}") from None
    write_phase1_cache_key_file(run_dir, compute_phase1_cache_fingerprint_full(mgd, hosts, mock))
    return outputs


def new_mode_flow(
    ctx: click.Context,
    mesh_graph_descriptor: Path,
    hosts: list[str] | None,
    dry_run: bool,
    verbose: bool,
    mpi_args: list[str] | None,
    debug_gdbserver: bool,
    mock_cluster_rank_binding: Path | None,
    skip_executable_check: bool,
    skip_mgd_check: bool,
    bare: bool,
    tcp_interface: str | None,
    rankfile_syntax: RankfileSyntax | None = None,
    force_rediscovery: bool = False,
    tracy_args: str | None = None,
) -> None:
    """Phase 1 (cached by descriptor and hosts), then :func:`legacy_flow` on its outputs."""
    try:
        mgd = resolve_path(mesh_graph_descriptor, description="Mesh graph descriptor", must_be_file=True)
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    mock = _mock_descriptors(mock_cluster_rank_binding)
    sorted_hosts = None if mock else sorted(hosts or [socket.gethostname()])
    fingerprint = compute_phase1_cache_fingerprint_full(mgd, sorted_hosts, mock)
    run_dir = ORIGINAL_CWD / "generated" / "ttrun" / fingerprint[:PHASE1_CACHE_ID_HEX_LEN]
    cached = not force_rediscovery and phase1_cache_hit_valid(run_dir, fingerprint, mock is not None)
    if cached:
        _say(f"Phase 1 cache hit, generate_rank_bindings not run ({run_dir})")
        outputs = get_generate_rank_bindings_output_paths(run_dir)
    else:
        phase1_args = mpi_args if bare else default_multihost_mpi_args(tcp_interface) + list(mpi_args or [])
        outputs = _phase1(mgd, sorted_hosts, mock, run_dir, phase1_args, dry_run)
        if outputs is None:
            return
    mapping = run_dir / PHASE2_MOCK_MAPPING_FILENAME
    legacy_flow(
        ctx,
        rank_binding=outputs[0],
        rank_bindings_mapping=None,
        dry_run=dry_run,
        verbose=verbose,
        mpi_args=mpi_args,
        debug_gdbserver=debug_gdbserver,
        mock_cluster_rank_binding=mapping if mock and mapping.is_file() else None,
        skip_executable_check=skip_executable_check,
        skip_mgd_check=skip_mgd_check,
        bare=bare,
        tcp_interface=tcp_interface,
        rankfile=outputs[1],
        rankfile_syntax=rankfile_syntax,
        phase2_failure_hint="stale_phase1_cache" if cached else None,
        tracy_args=tracy_args,
    )


from meshnn.distributed.ttrun_cli import main  # noqa: E402  (the command calls the flows above)
