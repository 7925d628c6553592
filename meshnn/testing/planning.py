"""``--meshnn-plan``: run a TTNN test suite on planning meshes (``meshnn.planning()``).

Every mesh the tests open (tt-metal's fixtures included) validates each op and allocates its
outputs at their real addresses but computes nothing, so a suite of large models runs in seconds
and shows where memory runs out.  A test that then reads values (``ttnn.to_torch``) raises
``meshnn.PlanningError``; with this option such a test is reported as PLANNED (every op before the
read was planned and fit), not as failed.  An out-of-memory error still fails its test.  The
terminal summary names the highest DRAM and L1 peaks of the session and the tests that set them.

Layers: the public surface (``import meshnn``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import meshnn

PLAN_OPTION = "--meshnn-plan"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("meshnn").addoption(
        PLAN_OPTION,
        action="store_true",
        default=False,
        help="plan instead of compute: meshes allocate at real addresses and compute nothing (meshnn plan)",
    )


class Planning:
    """The session's planning default and its memory timeline, per test."""

    def __init__(self) -> None:
        self.planning = meshnn.planning()
        self.peaks: dict[str, tuple[int, str, str]] = {}  # buffer type -> (bytes per device, test, op)
        self.planned = 0

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        with meshnn.MemoryTimeline() as timeline:
            yield
        for mesh in timeline.meshes:
            for kind, peak in mesh.peaks.items():
                if peak.per_device > self.peaks.get(kind, (-1,))[0]:
                    self.peaks[kind] = (peak.per_device, item.nodeid, peak.op)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
        outcome = yield
        report = outcome.get_result()
        if call.excinfo is not None and call.excinfo.errisinstance(meshnn.PlanningError):
            report.outcome = "passed"
            report.meshnn_planned = True
            self.planned += 1

    def pytest_report_teststatus(self, report: pytest.TestReport) -> tuple[str, str, str] | None:
        if getattr(report, "meshnn_planned", False) and report.when == "call":
            return "planned", "P", "PLANNED"
        return None

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        terminalreporter.section("meshnn plan")
        terminalreporter.write_line(f"{self.planned} test(s) planned up to their first read of values")
        for kind, (size, test, op) in sorted(self.peaks.items()):
            line = f"highest {kind} peak: {size / 2**20:,.2f} MiB per device in {test} (ttnn.{op})"
            terminalreporter.write_line(line)


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption(PLAN_OPTION, default=False) and not config.pluginmanager.has_plugin("meshnn-planning"):
        plugin = Planning()
        plugin.planning.enter()
        config.pluginmanager.register(plugin, "meshnn-planning")


def pytest_unconfigure(config: pytest.Config) -> None:
    plugin = config.pluginmanager.get_plugin("meshnn-planning")
    if plugin is not None:
        plugin.planning.exit()
        config.pluginmanager.unregister(plugin)
