"""Pages of records: alerts, outputs and their history, thresholds."""

from django.urls import path

from dashboard.pages import alerts, outputs, thresholds

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
    path("dashboard/thresholds/", thresholds.thresholds, name="dashboard-thresholds"),
    path("dashboard/thresholds/cycle/", thresholds.cycle_run, name="dashboard-cycle-run"),
]
