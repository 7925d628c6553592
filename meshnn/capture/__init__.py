"""Watching a run the way ttnn's own tools do: ``ttnn.graph`` capture and the ttnn report folder.

- :mod:`~meshnn.capture.graph` is the public ``ttnn.graph`` namespace (begin / end a capture,
  ``RunMode`` and the analysis helpers of :mod:`~meshnn.capture.trace`);
  :mod:`~meshnn.capture.graph_builder` makes ttnn's node list, :mod:`~meshnn.capture.graph_capture`
  feeds it from the mesh observers, :mod:`~meshnn.capture.circular_buffers` estimates the circular
  buffers meshnn does not model;
- :mod:`~meshnn.capture.config` is ``ttnn.CONFIG``: with ``enable_logging`` and a ``report_name`` a
  :class:`~meshnn.capture.report_writer.ReportWriter` writes the report folder that ttnn-visualizer
  opens (``db.sqlite`` of :mod:`~meshnn.capture.report_schema`, rows of
  :mod:`~meshnn.capture.report_rows`, ``config.json``, ``cluster_descriptor.yaml``) and the ops-perf
  CSV of the performance model (:mod:`~meshnn.capture.report_perf`).

Everything here is an observer of :mod:`meshnn.mesh.observers`: nothing costs anything while no
capture or report is active.

Layers: may import errors, host, formats, device, distributed, perf, mesh and tensor (not ops: it
watches them through the observers).
"""
