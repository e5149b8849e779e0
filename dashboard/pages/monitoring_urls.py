"""The lead's monitoring pages: queue charts, drift, validators, reviewers, calibration, and
the help page that says what their charts mean."""

from django.urls import path

from dashboard.pages import calibration, drift, queue, reviewers, validators
from dashboard.pages.help import help_page

urlpatterns = [
    path("dashboard/queue/", queue.queue_charts, name="dashboard-queue"),
    path("dashboard/drift/", drift.drift, name="dashboard-drift"),
    path("dashboard/validators/", validators.validators, name="dashboard-validators"),
    path("dashboard/reviewers/", reviewers.reviewers, name="dashboard-reviewers"),
    path("dashboard/calibration/", calibration.calibration, name="dashboard-calibration"),
    path("dashboard/help/", help_page, name="dashboard-help"),
]
