from django.urls import path

from learning.api import views

urlpatterns = [
    path("routing/", views.routing, name="api-routing"),
    path("thresholds/states/", views.threshold_states, name="api-threshold-states"),
    path("alerts/", views.AlertList.as_view(), name="api-alerts"),
    path("alerts/<int:pk>/acknowledge/", views.alert_acknowledge, name="api-alert-acknowledge"),
]
