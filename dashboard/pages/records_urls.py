"""Pages of records: alerts, outputs and their history, thresholds."""

urlpatterns: list = []
