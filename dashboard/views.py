from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import JsonResponse
from django.shortcuts import render
from django.views import defaults
from django.views.decorators.http import require_GET, require_safe

from dashboard import overview
from dashboard.pages.monitoring import filter_bar
from gating import prometheus
from gating.models import TaskType
from gating.roles import WATCH_LEARNING, Role, user_role
from learning.prometheus import cycle_states


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


@require_safe
def metrics(request):
    """Prometheus's scrape (gating.prometheus): the gate's counts, and the states of the
    queue, outbox and webhooks (gating) and of the learning cycles (learning)."""
    return prometheus.metrics_answer(request, readers=[prometheus.gating_states, cycle_states])


def page_not_found(request, exception):
    """404 in the API's own shape under /api/ (a path that matches no route, such as an id
    that is not a number), and the site's page elsewhere (templates/404.html), with its
    navigation."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return render(request, "404.html", status=404)


def permission_denied(request, exception):
    """403: the site's page with its navigation, the user's role and why (the roles that
    may, from ``gating.roles.refusal``); the API's own shape under /api/."""
    reason = str(exception) or "Your role may not open this page."
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": reason}, status=403)
    role = user_role(request.user) if request.user.is_authenticated else None
    context = {"reason": reason, "role": role.value if role else None}
    return render(request, "403.html", context, status=403)


def server_error(request):
    """500: the site's page, rendered without the request's context (the fault may lie in
    what a context needs, such as the database), so it names nobody and shows no
    navigation but the way home; the API's own shape under /api/."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Server error."}, status=500)
    return defaults.server_error(request)
