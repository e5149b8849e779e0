"""The help page: what every chart, setting and term of the dashboard means, from the same
declarations the pages show (dashboard.meanings, gating.gate_settings), so that a line under
a chart and its entry here cannot say two things."""

from django.shortcuts import render
from django.views.decorators.http import require_GET

from dashboard.meanings import CHARTS, TERMS
from gating.gate_settings import SETTINGS
from gating.roles import WATCH_LEARNING, page_for


@require_GET
@page_for(WATCH_LEARNING)
def help_page(request):
    return render(
        request,
        "dashboard/help.html",
        {"charts": CHARTS.items(), "settings": SETTINGS, "terms": TERMS.items()},
    )
