"""``meshnn``: the command-line entry point."""

from __future__ import annotations

import argparse
import sys

import meshnn


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="meshnn", description="TTNN's multi-device runtime on a simulated mesh")
    sub = parser.add_subparsers(dest="command", required=True)
    info_parser = sub.add_parser("info", help="the simulated systems and their memory figures")
    info_parser.add_argument("--system", default=None)
    info_parser.set_defaults(run=info)
    demo_parser = sub.add_parser("demo", help="the main job")
    demo_parser.add_argument("--system", default=None)
    demo_parser.set_defaults(run=info)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except meshnn.MeshnnError as error:
        print(f"meshnn: error: {error}", file=sys.stderr)
        return 2
