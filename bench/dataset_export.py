"""Dataset export benchmark: rows per second and peak memory of each export format over a
version of ``--rows`` rows (default 1,000,000).

What it measures, against a fresh PostgreSQL database: a dataset version whose rows are
inserted directly with one ``INSERT ... SELECT generate_series`` (a snapshot's own INSERT
... SELECT reads reviews, which a million would take long to make), with texts of the
lengths given (input, original and corrected), rubric scores, a weighted label and a
decision time. Then each format (chat, eval, csv, parquet) is exported in a child process
of its own, through learning.datasets.export_started, the download view's code minus
HTTP: the rows read through a server-side cursor, the writer's chunks drained and counted.

Peak memory is the child's max RSS growth: ``ru_maxrss`` after the export less the RSS
just before it (both from the kernel, KiB), i.e. what exporting added to a process that
had Django loaded and a connection open. Constant memory means it does not grow with
``--rows``: run with ``--rows 100000`` to compare.

Output: one JSON object on stdout; progress goes to stderr. Run by hand, never a test.

    python -m bench.dataset_export [--rows 1000000] [--formats chat,eval,csv,parquet]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime

from bench.harness import (
    ROOT,
    app_env,
    drop_database,
    git_state,
    machine_facts,
    recreate_database,
    stderr_log,
)

DEFAULT_DB = "gatehouse_bench_datasets"
FORMATS = ("chat", "eval", "csv", "parquet")
log = stderr_log("dataset_export")


def _rss_kib() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def _setup_django(db_name: str) -> None:
    os.environ.update(app_env(db_name))
    import django

    django.setup()


def seed(db_name: str, rows: int, text_chars: int) -> dict:
    """A dataset with one version of ``rows`` rows, every field filled; returns its ids."""
    _setup_django(db_name)
    from django.db import connection
    from django.utils import timezone

    from learning.dataset_formats import FIELDS
    from learning.models import Dataset, DatasetRow, DatasetVersion

    now = timezone.now()
    dataset = Dataset.objects.create(name="bench", filter={}, fields=list(FIELDS), created_at=now)
    version = DatasetVersion.objects.create(
        dataset=dataset, number=1, filter={}, fields=list(FIELDS), created_at=now
    )
    started = time.monotonic()
    # Texts of ``text_chars`` characters, different per row; a fifth of the rows rejected
    # (no corrected text, so the chat format leaves them out), a fifth modified.
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {DatasetRow._meta.db_table}
              (version_id, position, output_id, external_id, task_type, model, input,
               original, corrected, label, reject_reason, agreement, scores, weighted_label,
               decided_at)
            SELECT %(version)s, i, i, 'ext-' || i, 'summarize', 'model-a',
              left('Summarise report ' || i || ': ' || repeat(md5(i::text), 40), %(chars)s),
              left('Output ' || i || ' = ' || repeat(md5((i + 1)::text), 40), %(chars)s),
              CASE WHEN i %% 5 = 0 THEN NULL
                   ELSE left('Corrected ' || i || ' ' || repeat(md5((i + 2)::text), 40),
                             %(chars)s) END,
              CASE WHEN i %% 5 = 0 THEN 'rejected' WHEN i %% 5 = 1 THEN 'modified'
                   ELSE 'approved' END,
              CASE WHEN i %% 5 = 0 THEN 'factual_error' END,
              'single',
              jsonb_build_object('accuracy', i %% 5 + 1, 'tone', 'plain', 'cites', i %% 2 = 0),
              (i %% 100) / 100.0,
              %(now)s - make_interval(secs => i)
            FROM generate_series(1, %(rows)s) AS i
            """,
            {"version": version.pk, "rows": rows, "chars": text_chars, "now": now},
        )
        cursor.execute(f"ANALYZE {DatasetRow._meta.db_table}")
    version.row_count = rows
    version.save(update_fields=["row_count"])
    return {"version": version.pk, "seed_seconds": round(time.monotonic() - started, 1)}


def export_one(db_name: str, version_id: int, export_format: str) -> dict:
    """In a child process: export the version in one format, draining every chunk."""
    _setup_django(db_name)
    from django.db import connection

    from learning import datasets
    from learning.models import DatasetVersion

    version = DatasetVersion.objects.select_related("dataset").get(pk=version_id)
    connection.ensure_connection()
    rss_before = _rss_kib()
    started, cpu_started = time.monotonic(), time.process_time()
    size = chunks = 0
    for chunk in datasets.export_started(version=version, export_format=export_format, actor=None):
        size += len(chunk)
        chunks += 1
    seconds = time.monotonic() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "format": export_format,
        "rows": version.row_count,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(time.process_time() - cpu_started, 2),
        "rows_per_second": round(version.row_count / seconds),
        "bytes": size,
        "chunks": chunks,
        "rss_before_mib": round(rss_before / 1024, 1),
        "peak_rss_growth_mib": round(max(0, peak - rss_before) / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--text-chars", type=int, default=400)
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--db", default=DEFAULT_DB)
    parser.add_argument("--keep-db", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("VERSION", "FORMAT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(export_one(args.db, int(args.child[0]), args.child[1])))
        return

    formats = [f for f in args.formats.split(",") if f]
    if unknown := set(formats) - set(FORMATS):
        parser.error(f"unknown formats {sorted(unknown)}")
    pg_version = recreate_database(args.db)
    env = app_env(args.db)
    try:
        log("migrating")
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
            cwd=ROOT,
            env=env,
            check=True,
        )
        log(f"inserting {args.rows:,} rows")
        seeded = seed(args.db, args.rows, args.text_chars)
        results = []
        for export_format in formats:
            log(f"exporting {export_format}")
            done = subprocess.run(
                [sys.executable, "-m", "bench.dataset_export", "--db", args.db,
                 "--child", str(seeded["version"]), export_format],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                text=True,
                check=True,
            )  # fmt: skip
            results.append(json.loads(done.stdout))
            log(json.dumps(results[-1]))
    finally:
        if not args.keep_db:
            drop_database(args.db)
    state = git_state("learning", "bench", short=True)
    print(
        json.dumps(
            {
                "bench": "dataset_export",
                "at": datetime.now(UTC).isoformat(timespec="seconds"),
                "commit": state[0] if state else None,
                "uncommitted": state[1] if state else None,
                "rows": args.rows,
                "text_chars": args.text_chars,
                "seed_seconds": seeded["seed_seconds"],
                "peak_memory": "max RSS growth of the exporting process (ru_maxrss less "
                "VmRSS before the export)",
                "formats": results,
                "machine": machine_facts(pg_version),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
