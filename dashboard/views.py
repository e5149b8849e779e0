from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import JsonResponse
from django.shortcuts import render
from django.views import defaults
from django.views.decorators.http import require_GET

from gating.models import TaskType
from gating.roles import Role, user_role
from gating.selectors import outputs_visible_to


@login_required
def home(request):
    if user_role(request.user) is Role.GATEWAY:
        # A gateway account is an LLM gateway's service user: it reads its own outputs
        # through the API, and this page is the reviewers' view of every source.
        return render(request, "dashboard/home.html", {"api_only": True}, status=403)
    return render(
        request,
        "dashboard/home.html",
        {
            "task_types": TaskType.objects.all(),
            "recent_outputs": outputs_visible_to(request.user)[:20],
        },
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
