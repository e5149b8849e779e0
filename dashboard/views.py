from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from gating.models import Output, TaskType


@login_required
def home(request):
    return render(
        request,
        "dashboard/home.html",
        {
            "task_types": TaskType.objects.all(),
            "recent_outputs": Output.objects.select_related("task_type")[:20],
        },
    )


@require_GET
def healthz(request):
    """Liveness for load balancers and compose health checks: the database answers."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})
