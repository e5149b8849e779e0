from django.urls import path

from gating.api import views

urlpatterns = [
    path("outputs/", views.OutputCollection.as_view(), name="api-outputs"),
    path("outputs/batch/", views.output_batch_create, name="api-outputs-batch"),
    path("outputs/<int:pk>/", views.output_detail, name="api-output-detail"),
    path("task-types/", views.TaskTypeList.as_view(), name="api-task-types"),
    path("task-types/<str:name>/", views.TaskTypeDetail.as_view(), name="api-task-type-detail"),
    path("ping/", views.ping, name="api-ping"),
]
