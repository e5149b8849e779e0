"""Pages of records: alerts, outputs and their history, datasets, thresholds."""

from django.urls import path

from dashboard.pages import alerts, datasets, outputs, thresholds

urlpatterns = [
    path("dashboard/alerts/", alerts.alerts, name="dashboard-alerts"),
    path(
        "dashboard/alerts/acknowledge/",
        alerts.alerts_acknowledge_page,
        name="dashboard-alerts-acknowledge",
    ),
    path(
        "dashboard/alerts/<int:pk>/acknowledge/",
        alerts.alert_acknowledge_page,
        name="dashboard-alert-acknowledge",
    ),
    path("dashboard/outputs/", outputs.outputs, name="dashboard-outputs"),
    path("dashboard/outputs/<int:pk>/", outputs.output, name="dashboard-output"),
    path(
        "dashboard/outputs/<int:pk>/comments/",
        outputs.output_comment,
        name="dashboard-output-comment",
    ),
    path(
        "dashboard/outputs/<int:output_id>/datasets/",
        datasets.dataset_add_output_page,
        name="dashboard-output-dataset-add",
    ),
    path("dashboard/datasets/", datasets.datasets_page, name="dashboard-datasets"),
    path("dashboard/datasets/new/", datasets.dataset_create_page, name="dashboard-dataset-create"),
    path("dashboard/datasets/<int:pk>/", datasets.dataset_page, name="dashboard-dataset"),
    path(
        "dashboard/datasets/<int:pk>/versions/",
        datasets.dataset_snapshot_page,
        name="dashboard-dataset-snapshot",
    ),
    path("dashboard/thresholds/", thresholds.thresholds, name="dashboard-thresholds"),
    path("dashboard/thresholds/cycle/", thresholds.cycle_run, name="dashboard-cycle-run"),
]
