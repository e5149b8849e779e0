from django.urls import path

from learning.api import dataset_views, views

urlpatterns = [
    path("routing/", views.routing, name="api-routing"),
    path("thresholds/states/", views.threshold_states, name="api-threshold-states"),
    path("alerts/", views.AlertList.as_view(), name="api-alerts"),
    path("alerts/<int:pk>/acknowledge/", views.alert_acknowledge, name="api-alert-acknowledge"),
    path("datasets/", dataset_views.dataset_collection, name="api-datasets"),
    path("datasets/<int:pk>/", dataset_views.dataset_detail, name="api-dataset"),
    path(
        "datasets/<int:pk>/outputs/",
        dataset_views.dataset_outputs_add,
        name="api-dataset-outputs",
    ),
    path(
        "datasets/<int:pk>/outputs/<int:output_id>/",
        dataset_views.dataset_output_remove,
        name="api-dataset-output",
    ),
    path(
        "datasets/<int:pk>/versions/",
        dataset_views.dataset_versions,
        name="api-dataset-versions",
    ),
    path(
        "datasets/<int:pk>/versions/<int:number>/export/<str:export_format>/",
        dataset_views.dataset_export,
        name="api-dataset-export",
    ),
]
