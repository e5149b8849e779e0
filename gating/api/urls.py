from django.urls import path

from gating.api import comment_views, queue_views, rubric_views, status_views, views

urlpatterns = [
    path("outputs/", views.OutputCollection.as_view(), name="api-outputs"),
    path("outputs/batch/", views.output_batch_create, name="api-outputs-batch"),
    path("outputs/<int:pk>/", views.output_detail, name="api-output-detail"),
    path("outputs/<int:pk>/status/", status_views.output_status, name="api-output-status"),
    path("outputs/<int:pk>/comments/", comment_views.output_comments, name="api-output-comments"),
    path("task-types/", views.TaskTypeList.as_view(), name="api-task-types"),
    path("task-types/<str:name>/", views.TaskTypeDetail.as_view(), name="api-task-type-detail"),
    path(
        "task-types/<str:name>/rubric/",
        rubric_views.task_type_rubric,
        name="api-task-type-rubric",
    ),
    path(
        "task-types/<str:name>/rubric/versions/",
        rubric_views.task_type_rubric_versions,
        name="api-task-type-rubric-versions",
    ),
    path("ping/", views.ping, name="api-ping"),
    path("queue/", queue_views.QueueList.as_view(), name="api-queue"),
    path("queue/summary/", queue_views.queue_summary, name="api-queue-summary"),
    path("queue/claim/", queue_views.queue_claim, name="api-queue-claim"),
    path("queue/bulk-decision/", queue_views.queue_bulk_decision, name="api-queue-bulk"),
    path("queue/<int:item_id>/heartbeat/", queue_views.queue_heartbeat, name="api-queue-heartbeat"),
    path("queue/<int:item_id>/release/", queue_views.queue_release, name="api-queue-release"),
    path("queue/<int:item_id>/decision/", queue_views.queue_decision, name="api-queue-decision"),
]
