"""The outbox: tasks are stored with the transaction that asks for them, and the relay
publishes them in order, keeping whatever the broker does not take."""

import threading

import pytest
from django.db import connection, transaction
from django.utils import timezone

from gating.models import OutboxMessage
from gating.outbox import (
    RelayResult,
    outbox_enqueue,
    outbox_enqueue_many,
    outbox_prune,
    outbox_relay,
)

pytestmark = pytest.mark.django_db


class Broker:
    """Takes tasks until it is told to go away."""

    def __init__(self, refuse_after: int | None = None):
        self.taken: list[tuple[str, list]] = []
        self.refuse_after = refuse_after

    def __call__(self, message: OutboxMessage) -> None:
        if self.refuse_after is not None and len(self.taken) >= self.refuse_after:
            raise ConnectionRefusedError("Error 111 connecting to 127.0.0.1:6379")
        self.taken.append((message.task, message.args))


def test_a_rolled_back_transaction_leaves_no_task():
    with pytest.raises(RuntimeError), transaction.atomic():
        outbox_enqueue("gating.tasks.webhook_deliver", 1)
        raise RuntimeError("the decision failed")
    assert not OutboxMessage.objects.exists()


def test_the_relay_publishes_oldest_first_and_marks_each_once():
    outbox_enqueue("learning.tasks.cycle", "alerts", "2026-11-24T10:00:00+00:00")
    outbox_enqueue_many("gating.tasks.webhook_deliver", [[1], [2]])
    broker = Broker()

    result = outbox_relay(send=broker)

    assert result.published == 3 and not result.waiting
    assert broker.taken == [
        ("learning.tasks.cycle", ["alerts", "2026-11-24T10:00:00+00:00"]),
        ("gating.tasks.webhook_deliver", [1]),
        ("gating.tasks.webhook_deliver", [2]),
    ]
    assert not OutboxMessage.objects.filter(published_at__isnull=True).exists()
    assert outbox_relay(send=broker).published == 0
    assert len(broker.taken) == 3


def test_what_the_broker_refuses_waits_in_order_for_the_next_pass():
    outbox_enqueue_many("gating.tasks.webhook_deliver", [[1], [2], [3]])
    down = Broker(refuse_after=1)

    result = outbox_relay(send=down)

    assert result.published == 1 and result.waiting
    assert "connecting to 127.0.0.1:6379" in result.error
    waiting = list(OutboxMessage.objects.filter(published_at__isnull=True).order_by("id"))
    assert [m.args for m in waiting] == [[2], [3]]
    # The refused one records why; the one after it was not tried.
    assert (waiting[0].attempts, waiting[1].attempts) == (1, 0)
    assert "Error 111" in waiting[0].last_error

    back = Broker()
    assert outbox_relay(send=back).published == 2
    assert back.taken == [
        ("gating.tasks.webhook_deliver", [2]),
        ("gating.tasks.webhook_deliver", [3]),
    ]


def test_the_relay_takes_at_most_its_limit_per_pass():
    outbox_enqueue_many("gating.tasks.webhook_deliver", [[n] for n in range(5)])
    broker = Broker()
    assert outbox_relay(send=broker, limit=2).published == 2
    assert outbox_relay(send=broker, limit=2).published == 2
    assert [args for _, args in broker.taken] == [[0], [1], [2], [3]]


def test_prune_deletes_only_published_rows_older_than_asked():
    old, recent, waiting = outbox_enqueue_many("gating.tasks.webhook_deliver", [[1], [2], [3]])
    now = timezone.now()
    OutboxMessage.objects.filter(pk=old.pk).update(published_at=now - timezone.timedelta(days=8))
    OutboxMessage.objects.filter(pk=recent.pk).update(published_at=now)

    assert outbox_prune(older_than=now - timezone.timedelta(days=7)) == 1
    assert set(OutboxMessage.objects.values_list("pk", flat=True)) == {recent.pk, waiting.pk}


def test_everything_published_leaves_no_error_to_report():
    outbox_enqueue("gating.tasks.webhook_deliver", 1)
    assert outbox_relay(send=Broker()) == RelayResult(published=1, waiting=False, error="")


def test_the_error_names_the_exception_and_a_long_one_is_kept_to_2000_characters():
    outbox_enqueue("gating.tasks.webhook_deliver", 1)

    def refuse(message):
        raise ConnectionRefusedError("x" * 3000)

    result = outbox_relay(send=refuse)

    # The result carries the whole error, "ConnectionRefusedError: " (24 characters) and
    # the 3000 x's; the row keeps its first 2000 characters: the name and 1976 x's.
    assert result.error == "ConnectionRefusedError: " + "x" * 3000
    assert OutboxMessage.objects.get().last_error == "ConnectionRefusedError: " + "x" * 1976


def test_by_default_the_relay_hands_each_task_to_celery_without_kombus_own_retries(
    monkeypatch,
):
    sent = []

    class Celery:
        def send_task(self, name, args=None, **options):
            sent.append((name, args, options))

    monkeypatch.setattr("gating.outbox.current_app", Celery())
    outbox_enqueue("gating.tasks.webhook_deliver", 7)

    assert outbox_relay().published == 1
    # retry=None would not do: Celery then takes task_publish_retry, which is on.
    assert sent == [("gating.tasks.webhook_deliver", [7], {"retry": False})]


@pytest.mark.django_db(transaction=True)
def test_a_task_another_relay_holds_is_passed_over_not_waited_for(requires_postgres):
    held, _ = outbox_enqueue_many("gating.tasks.webhook_deliver", [[1], [2]])
    holding, release = threading.Event(), threading.Event()

    def other_relay():
        try:
            with transaction.atomic():
                OutboxMessage.objects.select_for_update().get(pk=held.pk)
                holding.set()
                release.wait(10)
        finally:
            connection.close()

    relay = threading.Thread(target=other_relay)
    relay.start()
    broker = Broker()
    try:
        assert holding.wait(10)
        with connection.cursor() as cursor:
            # A relay that waited for the held row would fail here rather than hang.
            cursor.execute("SET lock_timeout = '2s'")
        result = outbox_relay(send=broker)
    finally:
        release.set()
        relay.join()
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")

    assert result.published == 1
    assert broker.taken == [("gating.tasks.webhook_deliver", [2])]
    assert OutboxMessage.objects.get(pk=held.pk).published_at is None
