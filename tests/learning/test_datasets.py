"""Datasets of reviewed outputs (learning.datasets, learning.dataset_formats): what goes in,
the filter, immutable versions, field selection, and each export format, with the
expected values worked out by hand from the reviews the tests record."""

import csv
import io
import json
import math
from datetime import UTC, datetime, timedelta

import pyarrow.parquet as pq
import pytest

from gating import reviews, rubrics
from gating.exceptions import FieldInvalid, NotFound
from gating.models import AuditEvent, Output, Review, ReviewItem
from gating.reviews import DecisionInput, RecordedDecision
from gating.roles import Role
from learning import dataset_formats, datasets
from learning.models import CycleRun, DatasetRow, ReviewerReliability
from tests.factories import TaskTypeFactory, UserFactory, ingested

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
ALL = list(dataset_formats.FIELDS)


def decide(output, reviewer, action, *, at, **fields):
    item = ReviewItem.objects.get(output=output, state=ReviewItem.State.OPEN)
    reviews.decisions_record(
        [RecordedDecision(item, reviewer, DecisionInput(action=action, **fields), at)]
    )


@pytest.fixture
def world(held_outputs, user_in):
    """One output in each situation a dataset must tell apart, by name."""
    r1, r2, lead = user_in(Role.REVIEWER), user_in(Role.REVIEWER), user_in(Role.LEAD)
    single = held_outputs(5, task_type="single")
    rubrics.rubric_save(
        task_type=single[0].task_type,
        instructions="",
        dimensions=[
            {
                "name": "accuracy",
                "label": "Accuracy",
                "kind": "numeric",
                "minimum": 1,
                "maximum": 5,
            },
            {
                "name": "tone",
                "label": "Tone",
                "kind": "categorical",
                "choices": ["plain", "formal"],
            },
            {"name": "cites", "label": "Cites", "kind": "boolean"},
        ],
        actor=lead,
    )
    approved, modified, rejected, pending, bulk = single
    decide(approved, r1, "approve", at=T0, scores={"accuracy": 5, "tone": "plain", "cites": True})
    decide(
        modified,
        r1,
        "modify",
        at=T0 + timedelta(hours=1),
        edited_output="=SUM(A1) fixed",
        scores={"accuracy": 3, "tone": "formal", "cites": False},
    )
    decide(
        rejected,
        r2,
        "reject",
        at=T0 + timedelta(hours=2),
        reason="factual_error",
        scores={"accuracy": 1},
    )
    reviews.bulk_decide(
        lead=lead, items=ReviewItem.objects.filter(output=bulk), action="approve", reason="ok"
    )
    agreed, disagreed, adjudicated = held_outputs(3, task_type="double", double_review_rate=1.0)
    for output in (agreed, disagreed, adjudicated):
        decide(output, r1, "approve", at=T0 + timedelta(hours=3))
    decide(agreed, r2, "approve", at=T0 + timedelta(hours=4))
    decide(disagreed, r2, "reject", at=T0 + timedelta(hours=4), reason="unsafe")
    decide(adjudicated, r2, "reject", at=T0 + timedelta(hours=4), reason="off_task")
    decide(adjudicated, lead, "reject", at=T0 + timedelta(hours=5), reason="hallucination")
    gateway = approved.source
    TaskTypeFactory(name="delivered", approve_threshold=0.5, review_threshold=0.1)
    delivered = ingested(gateway, task_type="delivered")
    outputs = {
        "approved": approved,
        "modified": modified,
        "rejected": rejected,
        "pending": pending,
        "bulk": bulk,
        "agreed": agreed,
        "disagreed": disagreed,
        "adjudicated": adjudicated,
        "delivered": delivered,
    }
    outputs = {name: Output.objects.get(pk=o.pk) for name, o in outputs.items()}
    # The situations as the gate left them, checked so the tests below mean what they say.
    assert outputs["pending"].status == Output.Status.PENDING
    assert outputs["disagreed"].status == Output.Status.PENDING
    assert outputs["bulk"].status == Output.Status.APPROVED
    assert outputs["delivered"].status == Output.Status.APPROVED
    assert not outputs["delivered"].reviews.exists()
    assert outputs["adjudicated"].status == Output.Status.REJECTED
    return {"outputs": outputs, "r1": r1, "r2": r2, "lead": lead}


def matched(filter, dataset=None) -> set[int]:
    clean = datasets.filter_clean(filter)
    return set(
        datasets.reviews_matching(filter=clean, dataset=dataset).values_list("output_id", flat=True)
    )


def ids(world, *names) -> set[int]:
    return {world["outputs"][n].pk for n in names}


# --------------------------------------------------------------------------- what goes in


def test_only_outputs_settled_by_a_persons_review_go_in(world):
    # Not the pending one, the one waiting for adjudication, the bulk-decided one, nor the
    # one the gate delivered on its own.
    assert matched({}) == ids(world, "approved", "modified", "rejected", "agreed", "adjudicated")


def test_a_null_filter_takes_only_the_hand_added_outputs(world):
    lead = world["lead"]
    dataset = datasets.dataset_create(name="hand", filter=None, fields=ALL, actor=lead)
    assert matched(None, dataset) == set()

    datasets.outputs_add(dataset=dataset, output_ids=[world["outputs"]["modified"].pk], actor=lead)

    assert matched(None, dataset) == ids(world, "modified")


def test_outputs_not_settled_cannot_be_added_by_hand_and_nothing_is_added(world):
    lead = world["lead"]
    dataset = datasets.dataset_create(name="hand", filter=None, fields=ALL, actor=lead)
    o = world["outputs"]

    with pytest.raises(FieldInvalid) as refused:
        datasets.outputs_add(
            dataset=dataset, output_ids=[o["approved"].pk, o["disagreed"].pk], actor=lead
        )

    assert str(o["disagreed"].pk) in str(refused.value)
    assert not dataset.hand_added.exists()


def test_removing_an_output_not_added_by_hand_is_not_found(world):
    lead = world["lead"]
    dataset = datasets.dataset_create(name="d", filter={}, fields=ALL, actor=lead)
    with pytest.raises(NotFound):
        datasets.output_remove(
            dataset=dataset, output_id=world["outputs"]["approved"].pk, actor=lead
        )


@pytest.mark.parametrize(
    ("filter", "expected"),
    [
        ({"task_types": ["double"]}, {"agreed", "adjudicated"}),
        ({"labels": ["modified", "rejected"]}, {"modified", "rejected", "adjudicated"}),
        # The deciding review's reason: the adjudication's, not the second reviewer's.
        ({"reject_reasons": ["hallucination"]}, {"adjudicated"}),
        ({"reject_reasons": ["off_task"]}, set()),
        ({"agreement": ["adjudicated"]}, {"adjudicated"}),
        ({"agreement": ["agreed"]}, {"agreed"}),
        ({"agreement": ["single"]}, {"approved", "modified", "rejected"}),
        ({"scores": [{"dimension": "accuracy", "min": 3}]}, {"approved", "modified"}),
        ({"scores": [{"dimension": "accuracy", "min": 2, "max": 4}]}, {"modified"}),
        ({"scores": [{"dimension": "tone", "equals": "formal"}]}, {"modified"}),
        ({"scores": [{"dimension": "cites", "equals": True}]}, {"approved"}),
        ({"scores": [{"dimension": "cites", "equals": False}]}, {"modified"}),
        (
            {
                "decided_after": (T0 + timedelta(hours=1)).isoformat(),
                "decided_before": (T0 + timedelta(hours=2)).isoformat(),
            },
            {"modified"},
        ),
        ({"task_types": ["single"], "labels": ["approved"]}, {"approved"}),
    ],
)
def test_the_filter_keys_combine_with_and_and_list_values_with_or(world, filter, expected):
    # The decision times of the single reviews are the reviews' own (T0, +1 h, +2 h); the
    # outputs' decided_at is what the date keys read, which the queue set to them.
    assert matched(filter) == ids(world, *expected)


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ([], "filter"),
        ({"colour": ["red"]}, "filter.colour"),
        ({"labels": ["pending"]}, "filter.labels"),
        ({"labels": "approved"}, "filter.labels"),
        ({"labels": []}, "filter.labels"),
        ({"task_types": ["no-such-task"]}, "filter.task_types"),
        ({"reject_reasons": ["grumpy"]}, "filter.reject_reasons"),
        ({"agreement": ["unanimous"]}, "filter.agreement"),
        ({"scores": [{"dimension": "Accuracy", "min": 1}]}, "filter.scores[0].dimension"),
        ({"scores": [{"dimension": "a", "min": True}]}, "filter.scores[0].min"),
        ({"scores": [{"dimension": "a", "min": 2_000_000}]}, "filter.scores[0].min"),
        ({"scores": [{"dimension": "a", "min": 3, "max": 2}]}, "filter.scores[0].max"),
        ({"scores": [{"dimension": "a"}]}, "filter.scores[0]"),
        ({"scores": [{"dimension": "a", "equals": "x", "min": 1}]}, "filter.scores[0]"),
        ({"scores": [{"dimension": "a", "equals": None}]}, "filter.scores[0].equals"),
        ({"scores": [{"dimension": "a", "equals": 2e6}]}, "filter.scores[0].equals"),
        ({"task_types": ["a\x00"]}, "filter.task_types"),
        ({"decided_after": "2026-12-01"}, "filter.decided_after"),
        ({"decided_after": "2026-12-01T10:00:00"}, "filter.decided_after"),
        (
            {"decided_after": "2026-12-02T00:00:00Z", "decided_before": "2026-12-01T00:00:00Z"},
            "filter.decided_before",
        ),
    ],
)
def test_a_bad_filter_is_refused_by_the_key_at_fault(db, raw, field):
    with pytest.raises(FieldInvalid) as refused:
        datasets.filter_clean(raw)
    assert refused.value.field == field


def test_fields_are_validated_against_the_declared_list_and_kept_in_its_order(db):
    assert datasets.fields_clean(["label", "input"]) == ["input", "label"]
    for bad in ([], ["input", "secret"], "input", [1], ["input", "input"]):
        with pytest.raises(FieldInvalid):
            datasets.fields_clean(bad)


# --------------------------------------------------------------------------- versions


def test_a_version_copies_each_rows_values_and_is_audited(world):
    lead, o = world["lead"], world["outputs"]
    dataset = datasets.dataset_create(name="all", filter={}, fields=ALL, actor=lead)

    version = datasets.version_create(dataset=dataset, actor=lead)

    assert version.number == 1 and version.row_count == 5
    rows = {r.output_id: r for r in DatasetRow.objects.filter(version=version)}
    assert sorted(r.position for r in rows.values()) == [1, 2, 3, 4, 5]
    assert [rows[pk].position for pk in sorted(rows)] == [1, 2, 3, 4, 5]
    modified = rows[o["modified"].pk]
    assert modified.input == o["modified"].input_text
    assert modified.original == o["modified"].output_text
    assert modified.corrected == "=SUM(A1) fixed"
    assert modified.label == "modified"
    assert modified.reject_reason is None
    assert modified.agreement == "single"
    assert modified.scores == {"accuracy": 3, "tone": "formal", "cites": False}
    assert modified.task_type == "single"
    assert modified.external_id == o["modified"].external_id
    assert modified.decided_at == T0 + timedelta(hours=1)
    adjudicated = rows[o["adjudicated"].pk]
    assert (adjudicated.label, adjudicated.corrected) == ("rejected", None)
    assert (adjudicated.reject_reason, adjudicated.agreement) == ("hallucination", "adjudicated")
    assert rows[o["approved"].pk].corrected == o["approved"].output_text
    assert AuditEvent.objects.filter(
        action=AuditEvent.Action.DATASET_EDIT, after__version=1, after__row_count=5
    ).exists()


def test_a_version_does_not_change_when_reviews_do(world):
    lead, o = world["lead"], world["outputs"]
    dataset = datasets.dataset_create(name="all", filter={}, fields=ALL, actor=lead)
    first = datasets.version_create(dataset=dataset, actor=lead)
    before = list(DatasetRow.objects.filter(version=first).order_by("position").values())

    # Someone rewrites a review and an output after the snapshot (a shell, a migration):
    # the version keeps what it copied; the next version sees the change.
    Review.objects.filter(output=o["modified"]).update(scores={"accuracy": 1}, reason="")
    Output.objects.filter(pk=o["modified"].pk).update(
        final_output_text="changed", status=Output.Status.APPROVED
    )
    second = datasets.version_create(dataset=dataset, actor=lead)

    assert list(DatasetRow.objects.filter(version=first).order_by("position").values()) == before
    changed = DatasetRow.objects.get(version=second, output_id=o["modified"].pk)
    assert (changed.corrected, changed.label, changed.scores) == (
        "changed",
        "approved",
        {"accuracy": 1},
    )
    assert second.number == 2


def test_a_version_fills_only_the_fields_the_dataset_selects(world):
    lead = world["lead"]
    dataset = datasets.dataset_create(name="few", filter={}, fields=["label", "input"], actor=lead)
    version = datasets.version_create(dataset=dataset, actor=lead)

    assert version.fields == ["input", "label"]
    for row in DatasetRow.objects.filter(version=version):
        assert row.input and row.label
        assert (row.original, row.corrected, row.scores, row.weighted_label) == (None,) * 4
    exported = b"".join(
        datasets.export_started(version=version, export_format="eval", actor=lead)
    ).splitlines()
    assert {tuple(json.loads(line)) for line in exported} == {("input", "label")}
    with pytest.raises(FieldInvalid):
        datasets.export_started(version=version, export_format="chat", actor=lead)


# --------------------------------------------------------------------------- weighted label


def _sigmoid(x):
    return 1 / (1 + math.exp(-x))


def _logit(r):
    return math.log(r / (1 - r))


def test_the_weighted_label_weighs_each_vote_by_its_reviewers_reliability(world):
    lead, o = world["lead"], world["outputs"]
    cycle = CycleRun.objects.create(
        kind=CycleRun.Kind.AGREEMENT,
        window_start=T0,
        window_end=T0 + timedelta(days=1),
        status=CycleRun.Status.SUCCEEDED,
        started_at=T0,
    )
    for reviewer, reliability in ((world["r1"], 0.9), (world["r2"], 0.6)):
        ReviewerReliability.objects.create(
            cycle=cycle,
            reviewer=reviewer,
            n=10,
            reliability_raw=reliability,
            reliability=reliability,
        )
    dataset = datasets.dataset_create(name="w", filter={}, fields=ALL, actor=lead)
    version = datasets.version_create(dataset=dataset, actor=lead)
    weighted = dict(
        DatasetRow.objects.filter(version=version).values_list("output_id", "weighted_label")
    )

    # By hand: one approve by r1 (0.9); one reject by r2 (0.6); two approves (0.9, 0.6);
    # approve (0.9), reject (0.6) and the lead's reject at the prior 0.7 (not assessed).
    assert weighted[o["approved"].pk] == pytest.approx(0.9)
    assert weighted[o["modified"].pk] == pytest.approx(0.1)  # a modify finds a fault
    assert weighted[o["rejected"].pk] == pytest.approx(0.4)
    assert weighted[o["agreed"].pk] == pytest.approx(_sigmoid(_logit(0.9) + _logit(0.6)))
    assert weighted[o["adjudicated"].pk] == pytest.approx(
        _sigmoid(_logit(0.9) - _logit(0.6) - _logit(0.7))
    )
    assert datasets.weighted_label_of([(0.9, True), (0.6, False)]) == pytest.approx(
        0.9 * 0.4 / (0.9 * 0.4 + 0.1 * 0.6)
    )


# --------------------------------------------------------------------------- formats


ROWS_FIELDS = ["output_id", "input", "original", "corrected", "label", "scores", "decided_at"]
ROWS = [
    (7, "Q1?", "A1", "A1", "approved", {"accuracy": 5}, T0),
    (8, "=cmd|' /C calc'!A0", "@bad", "fixed", "modified", {}, T0 + timedelta(hours=1)),
    (9, "Q3?", "-wrong", None, "rejected", None, None),
]


def test_chat_jsonl_is_one_user_and_assistant_pair_per_delivered_output():
    lines = b"".join(dataset_formats.chat_jsonl(iter(ROWS), ROWS_FIELDS)).decode().splitlines()
    assert [json.loads(line) for line in lines] == [
        {"messages": [{"role": "user", "content": "Q1?"}, {"role": "assistant", "content": "A1"}]},
        {
            "messages": [
                {"role": "user", "content": "=cmd|' /C calc'!A0"},
                {"role": "assistant", "content": "fixed"},
            ]
        },
    ]  # the rejected output has no assistant text: left out


def test_eval_jsonl_is_one_object_of_the_fields_per_row():
    lines = b"".join(dataset_formats.eval_jsonl(iter(ROWS), ROWS_FIELDS)).decode().splitlines()
    assert json.loads(lines[0]) == {
        "output_id": 7,
        "input": "Q1?",
        "original": "A1",
        "corrected": "A1",
        "label": "approved",
        "scores": {"accuracy": 5},
        "decided_at": "2026-12-01T09:00:00+00:00",
    }
    assert json.loads(lines[2])["corrected"] is None
    assert len(lines) == 3


def test_csv_cells_never_start_a_formula():
    text = b"".join(dataset_formats.csv_text(iter(ROWS), ROWS_FIELDS)).decode()
    assert text.startswith("output_id,input,original,corrected,label,scores,decided_at\r\n")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[2][1] == "'=cmd|' /C calc'!A0"
    assert rows[2][2] == "'@bad"
    assert rows[3][2] == "'-wrong"
    assert rows[1][5] == '{"accuracy":5}'
    assert rows[1][6] == "2026-12-01T09:00:00+00:00"
    assert rows[3][3] == "" and rows[3][6] == ""
    for row in rows:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell


def test_an_empty_csv_is_its_header():
    assert b"".join(dataset_formats.csv_text(iter([]), ["input", "label"])) == b"input,label\r\n"


def test_parquet_reads_back_with_pyarrow_in_row_groups(monkeypatch):
    monkeypatch.setattr(dataset_formats, "PARQUET_ROW_GROUP", 2)
    chunks = list(dataset_formats.parquet_file(iter(ROWS), ROWS_FIELDS))
    # A chunk per row group written (two), and the footer.
    assert len(chunks) == 3
    parquet = pq.ParquetFile(io.BytesIO(b"".join(chunks)))
    assert parquet.metadata.num_row_groups == 2
    table = parquet.read()
    assert table.column_names == ROWS_FIELDS
    assert table.column("output_id").to_pylist() == [7, 8, 9]
    assert table.column("scores").to_pylist() == ['{"accuracy":5}', "{}", None]
    assert table.column("decided_at").to_pylist()[0] == T0
    assert table.column("corrected").to_pylist() == ["A1", "fixed", None]


def test_a_dataset_name_is_unique(world):
    lead = world["lead"]
    datasets.dataset_create(name="one", filter={}, fields=ALL, actor=lead)
    with pytest.raises(FieldInvalid) as refused:
        datasets.dataset_create(name="one", filter={}, fields=ALL, actor=lead)
    assert refused.value.field == "name"


def test_a_reviewer_is_not_given_datasets(db):
    assert not UserFactory(role=Role.REVIEWER).has_perm("learning.view_dataset")
    assert UserFactory(role=Role.LEAD).has_perm("learning.change_dataset")


def test_a_snapshot_takes_the_same_queries_whatever_its_size(world):
    """Set-based: the rows are copied in one INSERT ... SELECT, not one query per row."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    lead, o = world["lead"], world["outputs"]
    one = datasets.dataset_create(name="one", filter=None, fields=ALL, actor=lead)
    datasets.outputs_add(dataset=one, output_ids=[o["approved"].pk], actor=lead)
    every = datasets.dataset_create(name="every", filter={}, fields=ALL, actor=lead)
    counts = []
    for dataset in (one, every):
        with CaptureQueriesContext(connection) as queries:
            version = datasets.version_create(dataset=dataset, actor=lead)
        counts.append((version.row_count, len(queries)))
    assert [rows for rows, _ in counts] == [1, 5]
    assert counts[0][1] == counts[1][1]


@pytest.mark.parametrize("export_format", dataset_formats.FORMATS)
def test_each_writer_yields_before_it_has_read_every_row(monkeypatch, export_format):
    """Streamed: a writer holds one batch at a time, so its first chunk comes after the
    first batch is read, not after the last."""
    monkeypatch.setattr(dataset_formats, "BATCH_ROWS", 2)
    monkeypatch.setattr(dataset_formats, "PARQUET_ROW_GROUP", 2)
    read = []

    def rows():
        for n in range(1, 101):
            read.append(n)
            yield (n, f"input {n}", f"output {n}", "approved")

    chunks = dataset_formats.export_chunks(
        export_format, rows(), ["output_id", "input", "corrected", "label"]
    )
    first = next(chunks)
    assert first
    assert len(read) <= 3  # a batch of two, and the look-ahead that ends it
    assert sum(1 for _ in chunks) >= 49
    assert len(read) == 100
