"""tt-run's ``mpirun`` command: one ``-np 1`` segment per rank with that rank's environment, as
tt-metal builds it for Open MPI (``--bind-to none --tag-output``, ``-x NAME=value``, rankfile and
``--host`` placement, ``--oversubscribe`` when several ranks share a host), and the same command
in MPICH's words (:func:`to_launcher_dialect`) when the ``mpirun`` found is MPICH's (meshnn's
``pip install mpich``).

meshnn simulates every mesh on this machine: under MPICH every rank runs here, and the options
that place ranks on other hosts or pick network interfaces (``--host``, rankfiles, ``--mca``,
``--oversubscribe``) are checked, reported once on stderr, and left out of the launch.

May import: :mod:`meshnn.distributed.ttrun_config`.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from enum import Enum
from pathlib import Path

from meshnn.distributed import ttrun_config
from meshnn.distributed.ttrun_config import TTRunConfig, get_rank_environment, parent_environment

_OPENMPI_VERSION = re.compile(r"(?:Open\s*MPI|OpenMPI)[^\d]*(\d+)\.(\d+)", re.IGNORECASE)
_RANKFILE_LINE = re.compile(r"^\s*rank\s+(\d+)\s*=\s*(\S+)\s+slot\s*=.*$", re.IGNORECASE)
RANKFILE_FLAGS = ("--rankfile", "-rankfile", "-rf")
HOST_FLAGS = ("--host", "-host", "--hostfile", "-hostfile", "--default-hostfile")


class RankfileSyntax(Enum):
    """How a rankfile is passed to ``mpirun`` (Open MPI 5 / PRRTE, older Open MPI, an MCA parameter)."""

    MAP_BY_RANKFILE_FILE = "map_by_rankfile_file"
    RANKFILE = "rankfile"
    MCA_RMAPS_RANKFILE_PATH = "mca_rmaps_rankfile_path"


def get_mpi_launcher() -> str:
    """``mpirun-ulfm`` when on PATH, else ``mpirun`` (its full path when found)."""
    return shutil.which("mpirun-ulfm") or shutil.which("mpirun") or "mpirun"


def rankfile_path_for_mpi_cli(rankfile: str | Path, cwd: Path | None = None) -> str:
    """``rankfile`` relative to ``cwd`` (default: the launch directory), as PRRTE needs it."""
    base = (cwd or ttrun_config.ORIGINAL_CWD).resolve()
    return os.path.relpath(str(Path(rankfile).expanduser().resolve()), str(base))


def build_rankfile_args(syntax: RankfileSyntax, rankfile: Path, cwd: Path | None = None) -> list[str]:
    """The ``mpirun`` arguments that pass ``rankfile`` in ``syntax``."""
    if not isinstance(syntax, RankfileSyntax):
        raise ValueError(f"Unknown rankfile syntax: {syntax!r}")
    path = rankfile_path_for_mpi_cli(rankfile, cwd)
    if syntax is RankfileSyntax.MAP_BY_RANKFILE_FILE:
        return ["--map-by", f"rankfile:file={path}"]
    if syntax is RankfileSyntax.RANKFILE:
        return ["--rankfile", path]
    return ["--mca", "rmaps_rankfile_path", path]


def detect_rankfile_syntax(mpi_launcher: str, _subprocess_run=subprocess.run) -> RankfileSyntax:
    """``--map-by rankfile:file=`` for Open MPI 5 and later, else ``--rankfile``."""
    exe = shutil.which(mpi_launcher) or mpi_launcher if os.sep not in mpi_launcher else mpi_launcher
    try:
        done = _subprocess_run([exe, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return RankfileSyntax.RANKFILE
    found = _OPENMPI_VERSION.search(f"{done.stdout or ''}\n{done.stderr or ''}")
    if found and (int(found.group(1)), int(found.group(2))) >= (5, 0):
        return RankfileSyntax.MAP_BY_RANKFILE_FILE
    return RankfileSyntax.RANKFILE


def launcher_is_mpich(mpi_launcher: str, _subprocess_run=subprocess.run) -> bool:
    """True when ``mpi_launcher --version`` answers as MPICH's Hydra."""
    try:
        done = _subprocess_run([mpi_launcher, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "HYDRA" in f"{done.stdout or ''}{done.stderr or ''}"


def mpi_args_specify_bind_to(mpi_args: list[str] | None) -> bool:
    """True when ``mpi_args`` sets a binding policy (``--bind-to`` / ``-bind-to``)."""
    return any(a in ("--bind-to", "-bind-to") or a.startswith(("--bind-to=", "-bind-to=")) for a in mpi_args or ())


def mpi_args_contain_rankfile_options(mpi_args: list[str] | None) -> bool:
    """True when ``mpi_args`` places ranks with a rankfile (any of the three syntaxes)."""
    args = list(mpi_args or ())
    for arg in args:
        if arg in RANKFILE_FLAGS or arg.startswith(("--rankfile=", "-rankfile=")):
            return True
        if "rankfile:file=" in arg or arg == "rmaps_rankfile_path":
            return True
    return False


def has_host_selection_args(mpi_args: list[str]) -> bool:
    """True when ``mpi_args`` names hosts (``--host``, ``--hostfile``...)."""
    return any(a in HOST_FLAGS or a.split("=", 1)[0] in HOST_FLAGS for a in mpi_args)


def has_mca_param(mpi_args: list[str], param_name: str) -> bool:
    """True when ``--mca``/``-mca`` sets ``param_name``."""
    for i, arg in enumerate(mpi_args):
        if arg in ("--mca", "-mca") and i + 1 < len(mpi_args) and mpi_args[i + 1].split("=", 1)[0] == param_name:
            return True
    return False


def parse_rankfile(rankfile_path: Path) -> dict[int, str]:
    """Rank -> host of an Open MPI rankfile (``rank N=host slot=...`` lines; others skipped)."""
    mapping: dict[int, str] = {}
    for line in Path(rankfile_path).read_text().splitlines():
        found = _RANKFILE_LINE.match(line)
        if found and not line.strip().startswith("#"):
            mapping[int(found.group(1))] = found.group(2)
    return mapping


def rankfile_needs_oversubscribe(rankfile_path: Path) -> bool:
    """True when the rankfile puts more than one rank on a host."""
    hosts = list(parse_rankfile(rankfile_path).values())
    return len(hosts) > len(set(hosts))


def host_list_needs_oversubscribe(hosts: list[str]) -> bool:
    """True when a host is named more than once."""
    return len(hosts) > len(set(hosts))


def host_csv_needs_oversubscribe(host_csv: str) -> bool:
    """True when a ``--host`` value names a bare host (no ``:slots``) more than once."""
    bare = [t.strip() for t in host_csv.split(",") if t.strip() and ":" not in t]
    return len(bare) > len(set(bare))


def _rankfile_in(mpi_args: list[str]) -> Path | None:
    for i, arg in enumerate(mpi_args):
        value = None
        if arg in RANKFILE_FLAGS and i + 1 < len(mpi_args):
            value = mpi_args[i + 1]
        elif arg.startswith(("--rankfile=", "-rankfile=")):
            value = arg.split("=", 1)[1]
        elif "rankfile:file=" in arg:
            value = arg.split("rankfile:file=", 1)[1].split(":", 1)[0]
        elif arg == "rmaps_rankfile_path" and i + 1 < len(mpi_args):
            value = mpi_args[i + 1]
        if value and (ttrun_config.ORIGINAL_CWD / value).is_file():
            return (ttrun_config.ORIGINAL_CWD / value).resolve()
    return None


def ensure_oversubscribe_for_multi_proc_per_host(mpi_args: list[str], rankfile_hint: Path | None = None) -> list[str]:
    """``mpi_args`` with ``--oversubscribe`` first when a rankfile or a ``--host`` list puts
    several ranks on one host."""
    if "--oversubscribe" in mpi_args:
        return mpi_args
    rankfiles = [p for p in (rankfile_hint, _rankfile_in(mpi_args)) if p is not None and Path(p).is_file()]
    hosts = [mpi_args[i + 1] for i, a in enumerate(mpi_args[:-1]) if a in ("--host", "-host")]
    hosts += [a.split("=", 1)[1] for a in mpi_args if a.startswith(("--host=", "-host="))]
    if any(rankfile_needs_oversubscribe(p) for p in rankfiles) or any(map(host_csv_needs_oversubscribe, hosts)):
        return ["--oversubscribe", *mpi_args]
    return mpi_args


def build_host_slots_from_rankfile(rankfile_path: Path) -> tuple[str, int]:
    """``("host1:N,host2:M", ranks)`` from a rankfile (hosts in rank order); ``("", 0)`` if empty."""
    counts: dict[str, int] = {}
    mapping = parse_rankfile(rankfile_path)
    for rank in sorted(mapping):
        counts[mapping[rank]] = counts.get(mapping[rank], 0) + 1
    return ",".join(f"{h}:{n}" for h, n in counts.items()), len(mapping)


def normalize_rankfile_mpi_args(
    mpi_args: list[str] | None, rankfile_syntax: RankfileSyntax, cwd: Path | None = None
) -> list[str]:
    """``mpi_args`` with any rankfile option rewritten in ``rankfile_syntax`` (path relative to
    ``cwd``), and ``--host`` added from the rankfile's hosts when none is given."""
    args, out, found = list(mpi_args or ()), [], None
    i = 0
    while i < len(args):
        arg, value, step = args[i], None, 1
        if arg in RANKFILE_FLAGS and i + 1 < len(args):
            value, step = args[i + 1], 2
        elif arg.startswith(("--rankfile=", "-rankfile=")):
            value = arg.split("=", 1)[1]
        elif arg == "--map-by" and i + 1 < len(args) and "rankfile:file=" in args[i + 1]:
            value, step = args[i + 1].split("rankfile:file=", 1)[1].split(":", 1)[0], 2
        elif arg.startswith("--map-by=") and "rankfile:file=" in arg:
            value = arg.split("rankfile:file=", 1)[1].split(":", 1)[0]
        if value is None:
            out.append(arg)
        else:
            found = (ttrun_config.ORIGINAL_CWD / Path(value).expanduser()).resolve()
            out += build_rankfile_args(rankfile_syntax, found, cwd=cwd)
        i += step
    if found is not None and found.is_file() and not has_host_selection_args(out):
        hosts = list(dict.fromkeys(parse_rankfile(found).values()))
        if hosts:
            out += ["--host", ",".join(hosts)]
    return out


def build_mpi_command(
    config: TTRunConfig,
    program: list[str],
    mpi_args: list[str] | None = None,
    debug_gdbserver: bool = False,
    rankfile_syntax: RankfileSyntax | None = None,
    tracy_config: object = None,
) -> list[str]:
    """tt-metal's ``mpirun`` command for ``config``: options, then one ``-np 1`` segment per rank
    (rank order) with its ``-x NAME=value`` environment and ``program``."""
    launcher = get_mpi_launcher()
    syntax = rankfile_syntax if rankfile_syntax is not None else detect_rankfile_syntax(launcher)
    args = normalize_rankfile_mpi_args(mpi_args, syntax)
    cmd = [launcher]
    if not mpi_args_specify_bind_to(args) and not mpi_args_contain_rankfile_options(args):
        cmd += ["--bind-to", "none"]
    cmd += ["--tag-output", *args]
    parent = parent_environment()
    for i, binding in enumerate(sorted(config.rank_bindings, key=lambda b: b.rank)):
        cmd += [":"] if i else []
        cmd += ["-np", "1"]
        for name, value in get_rank_environment(binding, config, parent_env_prefix=parent).items():
            cmd += ["-x", f"{name}={value}"]
        if debug_gdbserver:
            port = 20000 + binding.rank
            line = f'echo "Rank {binding.rank} on $(hostname) listening on :{port}"; exec gdbserver :{port} '
            cmd += ["bash", "-c", line + shlex.join(program)]
        else:
            cmd += list(program)
    return cmd


_DROPPED_WITH_VALUE = {"--host", "-host", "--hostfile", "-hostfile", "--default-hostfile", "--map-by", "-map-by"}
_DROPPED_WITH_VALUE |= set(RANKFILE_FLAGS)


def _global_option(cmd: list[str], i: int, out: list[str], dropped: list[str]) -> int:
    """Translate the launcher option at ``cmd[i]``; the index after it."""
    arg = cmd[i]
    if arg == "--tag-output":
        out.append("-prepend-rank")
        return i + 1
    if arg == "-x" and i + 1 < len(cmd):  # before any rank's segment: every rank's
        name, _, value = cmd[i + 1].partition("=")
        out += ["-genv", name, value]
        return i + 2
    if arg in ("--mca", "-mca") and i + 2 < len(cmd):
        dropped.append(shlex.join(cmd[i : i + 3]))
        return i + 3
    if arg in _DROPPED_WITH_VALUE and i + 1 < len(cmd):
        dropped.append(shlex.join(cmd[i : i + 2]))
        return i + 2
    if arg == "--oversubscribe" or arg.split("=", 1)[0] in _DROPPED_WITH_VALUE:
        dropped.append(arg)
        return i + 1
    out.append(arg)
    return i + 1


def to_launcher_dialect(cmd: list[str]) -> tuple[list[str], list[str]]:
    """``cmd`` (Open MPI's words, as :func:`build_mpi_command` makes it) for MPICH's Hydra, and what
    was left out (placement on other hosts and network settings: every rank runs on this machine).
    Launcher options are translated (``--tag-output``: ``-prepend-rank``); in each rank's segment
    ``-np N`` becomes ``-n N`` and ``-x N=v`` ``-env N v``; the program's own arguments are kept."""
    out, dropped, i = [cmd[0]], [], 1
    while i < len(cmd) and cmd[i] not in ("-np", "-n"):
        i = _global_option(cmd, i, out, dropped)
    while i < len(cmd):
        while i + 1 < len(cmd) and cmd[i] in ("-np", "-n", "-x"):
            name, _, value = cmd[i + 1].partition("=")
            out += ["-n", cmd[i + 1]] if cmd[i] != "-x" else ["-env", name, value]
            i += 2
        while i < len(cmd) and cmd[i] != ":":
            out.append(cmd[i])
            i += 1
        if i < len(cmd):
            out.append(":")
            i += 1
    return out, dropped


def inject_rankfile_mpi_args(
    rankfile: Path,
    base_mpi_args: list[str],
    mpi_launcher: str,
    detect_fn=detect_rankfile_syntax,
    add_host_slots: bool = False,
    force_rankfile_syntax: RankfileSyntax | None = None,
    cwd: Path | None = None,
) -> list[str]:
    """``[--host h1:N,...?, <rankfile args>, *base_mpi_args]``: the host slots only when asked and
    ``base_mpi_args`` names no hosts; the syntax forced, else detected for ``mpi_launcher``."""
    hosts: list[str] = []
    if add_host_slots and not has_host_selection_args(list(base_mpi_args or ())):
        slots, ranks = build_host_slots_from_rankfile(rankfile)
        hosts = ["--host", slots] if slots and ranks else []
    syntax = force_rankfile_syntax if force_rankfile_syntax is not None else detect_fn(mpi_launcher)
    return [*hosts, *build_rankfile_args(syntax, rankfile, cwd=cwd), *(base_mpi_args or [])]
