"""gunicorn's hooks for Prometheus's multi-process mode (gating/prometheus.py).

Each worker keeps its counters in files under PROMETHEUS_MULTIPROC_DIR, and a scrape sums
them, so /metrics shows every worker's requests whichever worker answers. The directory is
set when this file is read, before the app is loaded (with --preload too), since
prometheus_client reads it when first imported; without PROMETHEUS_MULTIPROC_DIR, a fresh
directory of its own under the system's temporary one, removed when the server stops. It
is emptied at start: the last run's files would be counted again.

Use: ``gunicorn dashboard.wsgi -c dashboard/gunicorn.conf.py --bind ... --workers N``.
"""

import os
import shutil
import tempfile
from pathlib import Path

# The files prometheus_client writes, and only those: the directory may be shared.
_METRIC_FILES = ("counter_*.db", "gauge_*.db", "histogram_*.db", "summary_*.db")

if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    _own_directory = None
else:
    _own_directory = tempfile.mkdtemp(prefix="gatehouse-prometheus-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = _own_directory


def on_starting(server):
    directory = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    directory.mkdir(parents=True, exist_ok=True)
    for pattern in _METRIC_FILES:
        for stale in directory.glob(pattern):
            stale.unlink()
    server.log.info("Prometheus multi-process directory: %s", directory)


def child_exit(server, worker):
    # A dead worker's live gauges go; its counters and histograms stay in the sums.
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    if _own_directory:
        shutil.rmtree(_own_directory, ignore_errors=True)
