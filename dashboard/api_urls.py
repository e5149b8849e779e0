from django.urls import path

from dashboard import api

urlpatterns = [
    path("metrics/", api.MetricIndex.as_view(), name="api-metrics"),
    path("metrics/<str:name>/", api.MetricDetail.as_view(), name="api-metric"),
]
