"""The site's routes and error handlers, and one page that fails: for the 500 page's test."""

from django.urls import path

from dashboard.urls import handler403, handler404, handler500, urlpatterns  # noqa: F401


def fails(request):
    raise RuntimeError("a fault for the 500 page's test")


urlpatterns = [*urlpatterns, path("fails/", fails)]
