"""The lead's monitoring pages: queue charts, drift, validators, reviewers, calibration."""

from django.urls import path

from dashboard.pages import queue

urlpatterns = [
    path("dashboard/queue/", queue.queue_charts, name="dashboard-queue"),
]
