from django.urls import path

from gating import views

urlpatterns = [
    path("queue/", views.queue_page, name="queue"),
    path("queue/table/", views.queue_table, name="queue-table"),
    path("queue/next/", views.queue_next, name="queue-next"),
    path("queue/bulk/", views.queue_bulk, name="queue-bulk"),
    path("review/<int:item_id>/", views.review_page, name="review"),
    path("review/<int:item_id>/diff/", views.review_diff, name="review-diff"),
    path("review/<int:item_id>/comments/", views.review_comment, name="review-comment"),
    path("rubrics/", views.rubrics_page, name="rubrics"),
    path("rubrics/<str:name>/", views.rubric_page, name="rubric"),
]
