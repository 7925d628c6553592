"""``meshnn``: the command-line entry point (info, demo, memory, run, perf, plan)."""

from __future__ import annotations

import argparse
import sys

import meshnn
from meshnn.cli.output_paths import output_folder, output_picture


def info(args: argparse.Namespace) -> int:
    """Print the simulated systems and their figures, marking the selected one."""
    selected = meshnn.system_spec(args.system).name
    print(f"meshnn {meshnn.__version__}: simulated Tenstorrent systems (select with --system or $MESHNN_SYSTEM)")
    header = f"  {'system':8} {'arch':22} {'mesh':5} {'DRAM banks x bytes':24} {'L1 banks x bytes':20} alignment"
    print(header)
    for spec in meshnn.SYSTEMS.values():
        arch = spec.arch_spec
        mark = "*" if spec.name == selected else " "
        rows, cols = spec.mesh_shape
        dram = f"{arch.num_dram_banks} x {arch.dram_bank_size:,}"
        l1 = f"{spec.num_l1_banks} x {arch.l1_bank_size:,}"
        print(
            f"{mark} {spec.name:8} {arch.arch!s:22} {rows}x{cols:<3} {dram:24} {l1:20} "
            f"DRAM {arch.dram_alignment} / L1 {arch.l1_alignment}"
        )
    return 0


def parse_mesh(text: str) -> tuple[int, int]:
    try:
        rows, cols = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--mesh takes ROWSxCOLS, e.g. 2x4; got {text!r}") from None
    if rows < 1 or cols < 1:
        raise argparse.ArgumentTypeError(f"--mesh needs at least one row and one column, got {text!r}")
    return rows, cols


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (argparse prints the message, no traceback)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def system_name(text: str) -> str:
    """An argparse type: the name of a simulated system (``meshnn info`` lists them)."""
    if text.lower() not in meshnn.SYSTEMS:
        known = ", ".join(meshnn.SYSTEMS)
        raise argparse.ArgumentTypeError(f"unknown system {text!r}; the simulated systems are {known} (meshnn info)")
    return text.lower()


def check_mesh_fits(system: str | None, mesh: tuple[int, int] | None) -> None:
    """A ``--mesh`` larger than the system is refused naming the ``--system`` that has room."""
    spec = meshnn.system_spec(system)
    if mesh is None or mesh[0] * mesh[1] <= spec.num_devices:
        return
    needed = mesh[0] * mesh[1]
    bigger = [s for s in meshnn.SYSTEMS.values() if s.num_devices >= needed]
    rows, cols = spec.mesh_shape
    advice = (
        f"add --system {bigger[0].name} ({bigger[0].num_devices} devices, {'x'.join(map(str, bigger[0].mesh_shape))})"
        if bigger
        else f"the largest simulated system, galaxy, has {meshnn.SYSTEMS['galaxy'].num_devices}"
    )
    raise meshnn.MeshnnValueError(
        f"--mesh {mesh[0]}x{mesh[1]} needs {needed} devices but {spec.name} ({spec.description}) has "
        f"{spec.num_devices} ({rows}x{cols}): {advice}"
    )


def demo(args: argparse.Namespace) -> int:
    from meshnn.cli.demo import DemoConfig, run

    check_mesh_fits(args.system, args.mesh)

    config = DemoConfig(
        system=args.system,
        mesh=args.mesh,
        dtype=args.dtype,
        layers=args.layers,
        hidden=args.hidden,
        seq=args.seq,
        heads=args.heads or 16,
        fit_heads=args.heads is None,
    )
    return run(config)


def memory(args: argparse.Namespace) -> int:
    """Allocate a small tensor-parallel working set and print (and plot) the memory report."""
    from meshnn.cli.memory import show

    check_mesh_fits(args.system, args.mesh)
    return show(args.system, args.mesh, args.plot, args.timeline)


def run_script(args: argparse.Namespace) -> int:
    from meshnn.cli.reports import print_reports, report_mark
    from meshnn.cli.runner import run_path

    mark = report_mark()
    code = run_path(args.script, args.args, system=args.system)
    print_reports("meshnn run", since=mark)
    return code


def perf(args: argparse.Namespace) -> int:
    from meshnn.cli.perf import run_perf

    return run_perf(
        args.script, args.args, system=args.system, out=args.out, name=args.name, traced=args.traced, plot=args.plot,
        calibrate=args.calibrate,
    )  # fmt: skip


def plan(args: argparse.Namespace) -> int:
    from meshnn.cli.plan import plan_path

    return plan_path(args.script, args.args, system=args.system, steps=args.timeline, plot=args.plot)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="meshnn", description="TTNN's multi-device runtime on a simulated mesh")
    parser.add_argument("--version", action="version", version=f"meshnn {meshnn.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    systems = "simulated system: n150, n300, t3k (default; or $MESHNN_SYSTEM), galaxy, p150, p300"
    p = sub.add_parser("info", help="the simulated systems and their memory figures")
    p.add_argument("--system", type=system_name, default=None, help=f"{systems} (marked with *)")
    p.set_defaults(run=info)
    p = sub.add_parser("demo", help="a Llama-style decoder, tensor-parallel on the simulated mesh")
    p.add_argument("--system", type=system_name, default=None, help=systems)
    p.add_argument("--mesh", type=parse_mesh, default=None, help="ROWSxCOLS (default: the whole system)")
    p.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "bfloat8_b"], help="weight dtype")
    p.add_argument("--layers", type=positive_int, default=2, help="decoder layers (default 2)")
    p.add_argument("--hidden", type=positive_int, default=1024, help="model width (default 1024)")
    p.add_argument("--seq", type=positive_int, default=128, help="sequence length, tokens (default 128)")
    p.add_argument(
        "--heads", type=positive_int, default=None, help="attention heads (default 16, or more to split over the mesh)"
    )
    p.set_defaults(run=demo)
    p = sub.add_parser("memory", help="the per-device memory report (and a picture with --plot)")
    p.add_argument("--system", type=system_name, default=None, help=systems)
    p.add_argument("--mesh", type=parse_mesh, default=None, help="ROWSxCOLS (default: the whole system)")
    p.add_argument(
        "--plot", type=output_picture, default=None, metavar="FILE.png", help="draw each buffer type's address space"
    )
    p.add_argument("--timeline", action="store_true", help="record a few layers op by op (--plot draws the timeline)")
    p.set_defaults(run=memory)
    p = sub.add_parser("run", help="run a TTNN script unmodified, with `import ttnn` answered by meshnn")
    p.add_argument("--system", type=system_name, default=None, help=systems)
    p.add_argument("script", help="the Python script to run as __main__")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed on to the script")
    p.set_defaults(run=run_script)
    p = sub.add_parser("perf", help="run a TTNN script and predict each op's device time (table, ops-perf CSV, PNG)")
    p.add_argument("--system", type=system_name, default=None, help=systems)
    p.add_argument(
        "--out",
        type=output_folder,
        default="meshnn_perf",
        metavar="DIR",
        help="folder of the CSV and PNG (default meshnn_perf)",
    )
    p.add_argument("--name", default=None, help="file name part (default: the script's name)")
    p.add_argument("--traced", action="store_true", help="time every op as a traced replay (default: eager)")
    p.add_argument("--no-plot", dest="plot", action="store_false", help="write no PNG")
    p.add_argument("--calibrate", default=None, metavar="MEASURED.csv", help="a profiler's ops-perf CSV from hardware")
    p.add_argument("script", nargs="?", help="the Python script to run as __main__ (optional with --calibrate)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed on to the script")
    p.set_defaults(run=perf)
    p = sub.add_parser("plan", help="plan a TTNN script on meshes that allocate but compute nothing: peaks, OOMs")
    p.add_argument("--system", type=system_name, default=None, help=systems)
    p.add_argument("--timeline", action="store_true", help="also print every op's memory row")
    p.add_argument("--plot", type=output_picture, metavar="FILE.png", help="draw the busiest mesh's memory timeline")
    p.add_argument("script", help="the Python script to run as __main__")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed on to the script")
    p.set_defaults(run=plan)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except meshnn.MeshnnError as error:
        print(f"meshnn {args.command}: error: {error}", file=sys.stderr)
        return 2
