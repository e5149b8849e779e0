"""The datasets page: creating a dataset from a filter, snapshotting versions with their row
counts and download links, adding an output by hand from its page, and who may."""

import pytest

from gating.roles import Role
from learning.models import Dataset, DatasetOutput, DatasetVersion
from tests.factories import UserFactory, logged_in
from tests.learning.test_datasets import world  # noqa: F401  (the fixture)


@pytest.fixture
def lead_page(world):  # noqa: F811
    return logged_in(world["lead"])


def test_a_lead_creates_a_dataset_from_a_filter_and_downloads_its_version(world, lead_page):  # noqa: F811
    response = lead_page.post(
        "/dashboard/datasets/new/",
        {
            "name": "double <b>reviewed</b>",
            "task_types": ["double"],
            "agreement": ["agreed", "adjudicated"],
            "fields": ["input", "corrected", "label"],
        },
    )
    dataset = Dataset.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/dashboard/datasets/{dataset.pk}/"
    assert dataset.filter == {"task_types": ["double"], "agreement": ["agreed", "adjudicated"]}

    snapshot = lead_page.post(f"/dashboard/datasets/{dataset.pk}/versions/", follow=True)

    page = snapshot.content.decode()
    version = DatasetVersion.objects.get(dataset=dataset)
    assert version.row_count == 2  # the agreed and the adjudicated output
    assert "Version 1 of double &lt;b&gt;reviewed&lt;/b&gt;: 2 rows." in page
    assert "<b>reviewed</b>" not in page  # a lead's text is escaped like the rest
    for name in ("chat", "eval", "csv", "parquet"):
        assert f'href="/api/v1/datasets/{dataset.pk}/versions/1/export/{name}/"' in page
    # The download link works with the page's session.
    download = lead_page.get(f"/api/v1/datasets/{dataset.pk}/versions/1/export/csv/")
    assert download.status_code == 200
    assert b"".join(download.streaming_content).startswith(b"input,corrected,label\r\n")
    listing = lead_page.get("/dashboard/datasets/").content.decode()
    assert f'href="/dashboard/datasets/{dataset.pk}/"' in listing


def test_a_bad_filter_is_shown_with_its_field(world, lead_page):  # noqa: F811
    response = lead_page.post(
        "/dashboard/datasets/new/",
        {"name": "x", "score_dimension": "accuracy", "score_min": "lots", "fields": ["input"]},
    )
    assert response.status_code == 400
    assert 'data-field="filter.scores[0].min"' in response.content.decode()
    assert not Dataset.objects.exists()


def test_an_output_is_added_by_hand_from_its_page(world, lead_page):  # noqa: F811
    dataset = Dataset.objects.create(
        name="hand",
        filter=None,
        fields=["input"],
        created_at=world["outputs"]["approved"].created_at,
    )
    approved, pending = world["outputs"]["approved"], world["outputs"]["pending"]
    assert "Add to dataset" in lead_page.get(f"/dashboard/outputs/{approved.pk}/").content.decode()

    added = lead_page.post(
        f"/dashboard/outputs/{approved.pk}/datasets/", {"dataset": dataset.pk}, follow=True
    )
    refused = lead_page.post(
        f"/dashboard/outputs/{pending.pk}/datasets/", {"dataset": dataset.pk}, follow=True
    )

    assert "Added to the dataset hand." in added.content.decode()
    assert "Only an output whose label a person&#x27;s review settled" in refused.content.decode()
    assert list(DatasetOutput.objects.values_list("output_id", flat=True)) == [approved.pk]


@pytest.mark.parametrize("role", [Role.REVIEWER, Role.GATEWAY])
def test_reviewers_and_gateways_may_not_open_the_page(world, role):  # noqa: F811
    page = logged_in(UserFactory(role=role))
    approved = world["outputs"]["approved"]
    assert page.get("/dashboard/datasets/").status_code == 403
    assert page.post("/dashboard/datasets/new/", {"name": "x"}).status_code == 403
    assert page.post(f"/dashboard/outputs/{approved.pk}/datasets/", {}).status_code == 403
    if role == Role.REVIEWER:
        output_page = page.get(f"/dashboard/outputs/{approved.pk}/").content.decode()
        assert "Add to dataset" not in output_page
        assert 'href="/dashboard/datasets/"' not in output_page
