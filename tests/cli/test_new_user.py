"""A new user's first steps with the meshnn command: the README's galaxy demo, sizes refused with
a clear message (never a traceback), progress while the accuracy check runs, ``--version``, help
on every option, a memory report that says its working set is made up, and a script's mistake
shown at its own file and line."""

from __future__ import annotations

import argparse
import os
import pty
import select
import subprocess
import sys
import time

import pytest

from meshnn.cli import main as cli
from meshnn.cli.demo import DemoConfig, fitted
from meshnn.cli.memory import show


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    try:
        code = cli.main(list(args))
    except SystemExit as leaving:
        code = leaving.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_galaxy_demo_picks_heads_that_split_over_32_devices(capsys):
    code, out, err = run_cli(capsys, "demo", "--system", "galaxy", "--mesh", "8x4", "--layers", "1", "--seq", "32")
    assert code == 0, err
    assert "32 heads (1 per device)" in out and "PASS" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seq", "0"], "argument --seq: must be at least 1, got 0"),
        (["--hidden", "-32"], "argument --hidden: must be at least 1, got -32"),
        (["--layers", "-1"], "argument --layers: must be at least 1, got -1"),
        (["--heads", "0"], "argument --heads: must be at least 1, got 0"),
        (["--layers", "two"], "argument --layers: must be a whole number, got 'two'"),
        (["--mesh", "0x4"], "--mesh needs at least one row and one column"),
    ],
)
def test_sizes_that_cannot_work_are_refused_by_name(capsys, args, message):
    code, _, err = run_cli(capsys, "demo", *args)
    assert code == 2 and message in err and "Traceback" not in err


def test_a_model_that_does_not_split_says_what_to_pass(capsys):
    with pytest.raises(Exception, match="try --hidden 1152 --heads 18") as refused:
        fitted(DemoConfig(fit_heads=True), 3)  # no heads split 1024 over 3: the nearest hidden that does
    assert isinstance(refused.value, ValueError)
    assert fitted(DemoConfig(hidden=1152, heads=18), 3).heads == 18  # the advice works
    assert fitted(DemoConfig(fit_heads=True), 32).heads == 32 and fitted(DemoConfig(fit_heads=True), 8).heads == 16
    code, _, err = run_cli(capsys, "demo", "--mesh", "1x3", "--layers", "1", "--seq", "32")
    assert code == 2 and "meshnn demo: error:" in err and "try --hidden 1152 --heads 18" in err


def test_version_and_help_on_every_option(capsys):
    code, out, _ = run_cli(capsys, "--version")
    assert code == 0 and out.strip() == f"meshnn {cli.meshnn.__version__}"
    parser = cli.build_parser()
    missing = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                missing += [f"{name} {a.dest}" for a in sub._actions if not a.help]
    assert not missing, f"options without help text: {missing}"


def test_the_memory_report_says_its_working_set_is_synthetic(capsys):
    assert show("t3k", (1, 2), None) == 0
    assert "a synthetic working set" in capsys.readouterr().out


def test_progress_is_shown_while_the_accuracy_check_runs():
    """On a terminal, the progress line counts the float64 reference's layers too."""
    leader, follower = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "meshnn", "demo", "--mesh", "1x2", "--layers", "2", "--hidden", "256", "--seq", "32"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={k: v for k, v in os.environ.items() if k != "MESHNN_SYSTEM"},
    )
    os.close(follower)
    output, deadline = b"", time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(leader, 4096)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                output += chunk
            elif child.poll() is not None:
                break
    finally:
        child.kill() if child.poll() is None else None
        child.wait(timeout=30)
        os.close(leader)
    text = output.decode(errors="replace")
    assert "layer 1 float64 check" in text and "6/6" in text, text[-2000:]
    assert child.returncode == 0, text[-2000:]


def test_a_scripts_mistake_is_shown_at_its_file_and_line(tmp_path):
    script = tmp_path / "mistake.py"
    lines = [
        "import ttnn",
        "",
        "mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))",
        "ttnn.open_mesh_device(ttnn.MeshShape(9, 9))",
    ]
    script.write_text("\n".join(lines) + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "meshnn", "run", str(script)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1
    assert f'File "{script}", line 4, in <module>' in result.stderr, result.stderr
    assert "runpy" not in result.stderr and "cli/runner.py" not in result.stderr
    assert result.stderr.count("a 9x9 mesh needs 81 devices") == 1
