"""New task types and validators are created in one order by every request."""

from gating import services
from gating.models import TaskType, Validator
from gating.submissions import OutputSubmission
from tests.factories import SubmissionFactory


def test_new_task_types_and_validators_are_created_in_name_order(gateway, monkeypatch):
    # Two batches that created the same new rows in different orders could each hold a
    # row the other waits for: PostgreSQL would abort one with a deadlock. A set's order
    # differs between processes, so the order must not come from one.
    names = ["tt-kilo", "tt-alpha", "tt-echo", "tt-zulu", "tt-mike", "tt-bravo"]
    created: list[str] = []
    real_get_or_create = TaskType.objects.get_or_create

    def get_or_create(**kwargs):
        created.append(kwargs["name"])
        return real_get_or_create(**kwargs)

    monkeypatch.setattr(TaskType.objects, "get_or_create", get_or_create)
    submissions = [OutputSubmission.model_validate(SubmissionFactory(task_type=n)) for n in names]
    services.output_ingest_batch(source=gateway, submissions=submissions)

    assert created == sorted(names)
    rows = list(Validator.objects.order_by("pk").values_list("task_type__name", "name"))
    assert rows == sorted(rows)
