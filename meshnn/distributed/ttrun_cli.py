"""The ``tt-run`` command line: tt-metal's options, checked, handed to the flows of
:mod:`meshnn.distributed.ttrun` (looked up there at each call, so a test may replace them).

May import: :mod:`meshnn.distributed.ttrun` (at call time) and click.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click


def _split_mpi_args(ctx: click.Context, param: click.Parameter, value: str | None) -> list[str] | None:
    if not value:
        return None
    try:
        return shlex.split(value)
    except ValueError as error:
        raise click.BadParameter(f"cannot split {value!r}: {error}") from None


def _hosts(ctx: click.Context, param: click.Parameter, value: str | None) -> list[str] | None:
    from meshnn.distributed import ttrun

    return ttrun._parse_hosts_option(ctx, param, value)


_PATH = click.Path(path_type=Path)


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.option("--rank-binding", type=_PATH, help="Rank binding file (YAML); legacy mode.")
@click.option("--rank-bindings-mapping", type=_PATH, help="Sub-context id -> rank binding overlays (YAML).")
@click.option("--mesh-graph-descriptor", type=_PATH, help="Mesh graph descriptor; new mode (needs --hosts or mocks).")
@click.option("--hosts", type=str, callback=_hosts, help="Comma-separated hostnames (new mode).")
@click.option("--dry-run", is_flag=True, help="Print the commands without running them.")
@click.option("-v", "--verbose", is_flag=True, help="Path resolution diagnostics.")
@click.option("--mpi-args", callback=_split_mpi_args, help="More mpirun arguments (one quoted string).")
@click.option("--debug-gdbserver", is_flag=True, help="Start each rank under gdbserver (port 20000 + rank).")
@click.option("--mock-cluster-rank-binding", type=_PATH, help="Rank -> mock cluster descriptor (YAML).")
@click.option("--skip-executable-check", is_flag=True, help="Do not check that the program exists here.")
@click.option("--skip-mgd-check", is_flag=True, help="Do not check that the mesh graph descriptor exists here.")
@click.option("--bare", is_flag=True, help="No default multi-host MPI settings.")
@click.option("--tcp-interface", type=str, default=None, help="Network interface for MPI's TCP transport.")
@click.option("--rankfile-syntax", type=click.Choice(["auto", "rankfile", "map-by", "mca"]), default="auto")
@click.option("--force-rediscovery", is_flag=True, help="New mode: run Phase 1 even on a cache hit.")
@click.option("--tracy", "tracy_args", type=str, default=None, help="Tracy arguments (recorded; meshnn has none).")
@click.pass_context
def main(ctx: click.Context, **options: object) -> None:
    """tt-run: launch a TT-Metal / TTNN program on several MPI ranks, one mesh per rank binding.

    \b
    tt-run --rank-binding rank_binding.yaml python my_app.py
    tt-run --mesh-graph-descriptor mgd.textproto --hosts node1,node2 python my_app.py
    """
    from meshnn.distributed import ttrun

    modes = [options["rank_binding"], options["rank_bindings_mapping"], options["mesh_graph_descriptor"]]
    given = sum(m is not None for m in modes)
    if given != 1:
        raise click.ClickException(
            "Specify exactly one of --rank-binding, --rank-bindings-mapping or --mesh-graph-descriptor: "
            + ("they are mutually exclusive" if given else "one of them must be specified")
        )
    syntax = ttrun._parse_rankfile_syntax_option(str(options.pop("rankfile_syntax")))
    mgd, hosts = options.pop("mesh_graph_descriptor"), options.pop("hosts")
    rediscover = options.pop("force_rediscovery")
    if mgd is None:
        if hosts is not None:
            ttrun._say("--hosts is ignored in legacy mode (--rank-binding); use --mesh-graph-descriptor")
        if rediscover:
            ttrun._say("--force-rediscovery applies only to new mode (--mesh-graph-descriptor); ignored")
        ttrun.legacy_flow(ctx, rankfile_syntax=syntax, **options)  # type: ignore[arg-type]
        return
    if options["mock_cluster_rank_binding"] is None and hosts is None:
        raise click.ClickException(
            "--hosts is required for new mode (--mesh-graph-descriptor) unless --mock-cluster-rank-binding is provided."
        )
    options.pop("rank_binding"), options.pop("rank_bindings_mapping")
    ttrun.new_mode_flow(
        ctx,
        mgd,
        hosts,
        rankfile_syntax=syntax,
        force_rediscovery=rediscover,
        **options,  # type: ignore[arg-type]
    )
