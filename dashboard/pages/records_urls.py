"""Pages of records: alerts, outputs and their history, thresholds."""

from django.urls import path

from dashboard.pages import alerts

urlpatterns = [
    path("dashboard/alerts/", alerts.alerts, name="dashboard-alerts"),
    path(
        "dashboard/alerts/<int:pk>/acknowledge/",
        alerts.alert_acknowledge_page,
        name="dashboard-alert-acknowledge",
    ),
]
