from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from dashboard import views

handler403 = views.permission_denied
handler404 = views.page_not_found
handler500 = views.server_error

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    # For Prometheus, outside the API and its schema (docs/integrations.md).
    path("metrics", views.metrics, name="metrics"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("gating.api.urls")),
    path("api/v1/", include("learning.api.urls")),
    path("api/v1/", include("dashboard.api_urls")),
    path("", include("gating.urls")),
    path("", include("dashboard.pages.monitoring_urls")),
    path("", include("dashboard.pages.records_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]
