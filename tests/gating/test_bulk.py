"""The hand-written bulk paths behave as the ORM's own."""

from datetime import UTC, datetime

import pytest
from django.db import DataError, connection, transaction
from django.db.models.signals import post_init

from gating import bulk
from gating.models import Output, ReviewItem, TaskModelStats
from gating.reviews import _pair_counts_add
from tests.factories import TaskModelStatsFactory, TaskTypeFactory, UserFactory


def _fields(obj) -> dict:
    return {k: v for k, v in vars(obj).items() if k != "_state"}


def _output_values(**values) -> dict:
    """An output's values by attname, some of its fields left to their defaults."""
    return {
        "external_id": "x-1",
        "model": "m",
        "input_text": "in",
        "output_text": "out",
        "input_clarity": 0.5,
        "coherence": 0.25,
        "score": 6.5,
        "base_score": 6.0,
        "decision": "warning",
        "created_at": datetime(2026, 3, 2, 9, tzinfo=UTC),
        **values,
    }


def test_unsaved_holds_what_the_constructor_would():
    values = _output_values(source_id=7, task_type_id=3)
    fast, constructed = bulk.unsaved(Output, values), Output(**values)

    assert _fields(fast) == _fields(constructed)
    # Unset fields took their defaults, the pk among them.
    assert fast.pk is None and fast.metadata == {} and fast.validator_results == []
    assert (fast._state.adding, fast._state.db) == (True, None)


def test_unsaved_makes_callable_defaults_anew_for_each_instance():
    first, second = bulk.unsaved(Output, {}), bulk.unsaved(Output, {})
    first.metadata["k"] = 1

    assert second.metadata == {}
    assert Output().metadata == {}


def test_unsaved_goes_through_the_constructor_while_init_receivers_are_connected():
    seen = []

    def receiver(sender, instance, **kwargs):
        seen.append(instance)

    post_init.connect(receiver, sender=Output)
    try:
        output = bulk.unsaved(Output, {"model": "m"})
    finally:
        post_init.disconnect(receiver, sender=Output)

    assert seen == [output]


def test_unsaved_skips_the_constructor_while_no_init_receiver_is_connected(monkeypatch):
    def constructor(self, *args, **kwargs):
        raise AssertionError("Model.__init__ was called")

    monkeypatch.setattr(Output, "__init__", constructor)

    assert bulk.unsaved(Output, {"model": "m"}).model == "m"


def test_unsaved_refuses_a_name_that_is_not_a_field_as_the_constructor_does():
    with pytest.raises(TypeError, match="no field named modle"):
        bulk.unsaved(Output, {"modle": "m"})
    # A field's name rather than its column's attname, too.
    with pytest.raises(TypeError, match="no field named task_type"):
        bulk.unsaved(Output, {"task_type": None})


@pytest.mark.django_db
def test_an_unsaved_instance_saves_and_reloads_like_a_constructed_one():
    output = bulk.unsaved(
        Output,
        _output_values(
            source_id=UserFactory().pk,
            task_type_id=TaskTypeFactory().pk,
            review_threshold=4.0,
            approve_threshold=7.0,
            impacts=[{"factor": "coherence", "points": 0.375, "detail": "0.25 × 1.5"}],
        ),
    )
    output.save()
    item = bulk.unsaved(
        ReviewItem,
        {
            "output_id": output.pk,
            "kind": "review",
            "task_type_id": output.task_type_id,
            "model": "m",
            "score": 6.5,
            "queued_at": output.created_at,
        },
    )
    item.save()

    stored = Output.objects.get(pk=output.pk)
    assert _fields(stored) == _fields(output)
    assert ReviewItem.objects.get(pk=item.pk).state == ReviewItem.State.OPEN


@pytest.mark.django_db
def test_copy_refuses_an_integer_its_column_cannot_hold_instead_of_wrapping_it(
    requires_postgres,
):
    task_type = TaskTypeFactory()
    table = bulk.Table.of(TaskModelStats)
    largest = 2**31 - 1

    with connection.cursor() as cursor:
        with (
            pytest.raises(DataError, match="out of range for gating_taskmodelstats"),
            transaction.atomic(),
        ):
            bulk.copy_rows(
                cursor, table, [TaskModelStats(task_type=task_type, reviewed_count=largest + 1)]
            )
        bulk.copy_rows(
            cursor, table, [TaskModelStats(task_type=task_type, model="m", reviewed_count=largest)]
        )

    assert list(TaskModelStats.objects.values_list("model", "reviewed_count")) == [("m", largest)]


@pytest.mark.django_db
def test_pair_counters_add_to_existing_pairs_and_create_new_ones_in_one_statement(
    django_assert_num_queries,
):
    task_type = TaskTypeFactory()
    TaskModelStatsFactory(
        task_type=task_type, model="old", reviewed_count=40, approved_unchanged_count=30
    )

    with django_assert_num_queries(1):
        _pair_counts_add([(task_type.pk, "new", 2, 1), (task_type.pk, "old", 3, 0)])

    counts = TaskModelStats.objects.filter(task_type=task_type).values_list(
        "model", "reviewed_count", "approved_unchanged_count"
    )
    assert sorted(counts) == [("new", 2, 1), ("old", 43, 30)]
