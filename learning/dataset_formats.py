"""A dataset version's rows in each export format, as chunks of bytes for a streamed
download (docs/datasets.md). Pure: rows in, bytes out, no database; what reads the rows
(learning.datasets.version_rows) keeps memory flat, and so must every writer here, which
holds at most one batch of rows at a time.

Rows are tuples of the version's fields, in the order of ``fields``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from datetime import datetime
from itertools import islice

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from gating.formatting import csv_cell

# The row fields a dataset may select, in the order the exports write them.
FIELDS = (
    "output_id",
    "external_id",
    "task_type",
    "model",
    "input",
    "original",
    "corrected",
    "label",
    "reject_reason",
    "agreement",
    "scores",
    "weighted_label",
    "decided_at",
)
FORMATS = ("chat", "eval", "csv", "parquet")
CONTENT_TYPES = {
    "chat": "application/x-ndjson",
    "eval": "application/x-ndjson",
    "csv": "text/csv; charset=utf-8",
    "parquet": "application/vnd.apache.parquet",
}
EXTENSIONS = {"chat": "chat.jsonl", "eval": "eval.jsonl", "csv": "csv", "parquet": "parquet"}
# Rows per yielded chunk (and per Parquet row group): large enough that the per-chunk cost
# vanishes, small enough that a chunk of long texts stays a few megabytes.
BATCH_ROWS = 1_000
PARQUET_ROW_GROUP = 10_000

_PARQUET_TYPES = {
    "output_id": pa.int64(),
    "weighted_label": pa.float64(),
    "decided_at": pa.timestamp("us", tz="UTC"),
}


def format_problem(export_format: str, fields: list[str]) -> str | None:
    """Why a version with ``fields`` cannot be written in ``export_format``, or None."""
    if export_format not in FORMATS:
        return f"Use one of {', '.join(FORMATS)}."
    if export_format == "chat" and not {"input", "corrected"} <= set(fields):
        return "The chat format needs the fields input and corrected."
    return None


def export_chunks(export_format: str, rows: Iterable[tuple], fields: list[str]) -> Iterator[bytes]:
    writer = {"chat": chat_jsonl, "eval": eval_jsonl, "csv": csv_text, "parquet": parquet_file}
    return writer[export_format](rows, fields)


def _batches(rows: Iterable[tuple], size: int) -> Iterator[list[tuple]]:
    rows = iter(rows)
    while batch := list(islice(rows, size)):
        yield batch


def chat_jsonl(rows: Iterable[tuple], fields: list[str]) -> Iterator[bytes]:
    """One chat fine-tuning example per line: the input as the user's message, the
    delivered text (approved as it was, or as modified) as the assistant's. Rejected
    outputs have no delivered text, so they are left out."""
    at_input, at_corrected = fields.index("input"), fields.index("corrected")
    for batch in _batches(rows, BATCH_ROWS):
        yield b"".join(
            orjson.dumps(
                {
                    "messages": [
                        {"role": "user", "content": row[at_input]},
                        {"role": "assistant", "content": row[at_corrected]},
                    ]
                }
            )
            + b"\n"
            for row in batch
            if row[at_corrected] is not None
        )


def eval_jsonl(rows: Iterable[tuple], fields: list[str]) -> Iterator[bytes]:
    """One JSON object per row with the version's fields (null where a row has no value,
    times in RFC 3339)."""
    for batch in _batches(rows, BATCH_ROWS):
        yield b"".join(orjson.dumps(dict(zip(fields, row, strict=True))) + b"\n" for row in batch)


def csv_text(rows: Iterable[tuple], fields: list[str]) -> Iterator[bytes]:
    """A header line of the fields, then a line per row (RFC 4180, CRLF), each cell through
    gating.formatting.csv_cell: no cell starts as a formula."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(fields)
    for batch in _batches(rows, BATCH_ROWS):
        writer.writerows([_csv_value(v) for v in row] for row in batch)
        yield out.getvalue().encode()
        out.seek(0)
        out.truncate()
    if out.tell():  # no rows: the header alone
        yield out.getvalue().encode()


def _csv_value(value) -> str:
    return csv_cell(value.isoformat() if isinstance(value, datetime) else value)


class _Drain(io.RawIOBase):
    """A write-only file the Parquet writer writes into, that the generator drains."""

    def __init__(self):
        self._chunks: list[bytes] = []
        self._position = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self._chunks.append(bytes(data))
        self._position += len(data)
        return len(data)

    def tell(self) -> int:
        return self._position

    def drain(self) -> bytes:
        data, self._chunks = b"".join(self._chunks), []
        return data


def parquet_schema(fields: list[str]) -> pa.Schema:
    """Text fields as strings; scores as their JSON text (their keys are each rubric's own);
    output_id int64, weighted_label float64, decided_at a UTC timestamp."""
    return pa.schema([(name, _PARQUET_TYPES.get(name, pa.string())) for name in fields])


def parquet_file(rows: Iterable[tuple], fields: list[str]) -> Iterator[bytes]:
    """A Parquet file, a row group per PARQUET_ROW_GROUP rows, each yielded once written."""
    schema = parquet_schema(fields)
    at_scores = fields.index("scores") if "scores" in fields else None
    sink = _Drain()
    with pq.ParquetWriter(pa.PythonFile(sink, mode="w"), schema, compression="zstd") as writer:
        for batch in _batches(rows, PARQUET_ROW_GROUP):
            columns = list(zip(*batch, strict=True))
            if at_scores is not None:
                columns[at_scores] = [
                    None if v is None else orjson.dumps(v).decode() for v in columns[at_scores]
                ]
            arrays = [pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)]
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
            yield sink.drain()
    yield sink.drain()
