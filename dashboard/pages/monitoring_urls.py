"""The lead's monitoring pages: queue charts, drift, validators, reviewers, calibration."""

urlpatterns: list = []
