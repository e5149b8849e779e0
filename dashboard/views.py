from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import JsonResponse
from django.shortcuts import render
from django.views import defaults
from django.views.decorators.http import require_GET

from dashboard import overview
from dashboard.pages.monitoring import filter_bar
from gating.models import TaskType
from gating.roles import WATCH_LEARNING, Role, user_role


@login_required
def home(request):
    """The overview: what the gate decided in the range, what it sent to people, what the
    audits say of what it delivered, the queue, and the alerts."""
    if user_role(request.user) is Role.GATEWAY:
        # A gateway account is an LLM gateway's service user: it reads its own outputs
        # through the API, and this page is the reviewers' view of every source.
        return render(request, "dashboard/home.html", {"api_only": True}, status=403)
    task_types = list(TaskType.objects.order_by("name"))
    bar = filter_bar(request.GET)
    context = {
        **bar,
        "task_types": task_types,
        "can_download": request.user.has_perm(WATCH_LEARNING),
        **overview.overview(bar["dashboard_filter"], user=request.user, task_types=task_types),
    }
    return render(
        request, "dashboard/home.html", context, status=400 if bar["filter_error"] else 200
    )


@require_GET
def healthz(request):
    """Liveness for load balancers and compose health checks: the database answers."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


def page_not_found(request, exception):
    """404 in the API's own shape under /api/ (a path that matches no route, such as an id
    that is not a number), and Django's page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)
