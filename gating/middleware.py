import time

from django.conf import settings
from django.http import JsonResponse

from gating import prometheus
from gating.ingest_answers import ingest_route


class RequestBodyLimitMiddleware:
    """Answer 413 for a body over MAX_REQUEST_BODY_BYTES before anything parses it.

    DRF's parsers stream the body and so bypass DATA_UPLOAD_MAX_MEMORY_SIZE. A body sent
    without Content-Length reads as empty in Django, so the header is all there is to check.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return JsonResponse({"detail": "Content-Length is not a number."}, status=400)
        if length > settings.MAX_REQUEST_BODY_BYTES:
            return too_large_response()
        return self.get_response(request)


def too_large_response() -> JsonResponse:
    return JsonResponse(
        {"detail": f"Request body is larger than {settings.MAX_REQUEST_BODY_BYTES} bytes."},
        status=413,
    )


class IngestMetricsMiddleware:
    """Time each ingest request and count the decisions it answers (gating.prometheus).

    Outside the ingest view, so that what is measured is what the gateway waits for, a 413
    or a refused token included, however the view is written.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        route = ingest_route(request)
        if route is None:
            return self.get_response(request)
        started = time.perf_counter()
        response = self.get_response(request)
        prometheus.ingest_observe(
            route=route, response=response, seconds=time.perf_counter() - started
        )
        return response
