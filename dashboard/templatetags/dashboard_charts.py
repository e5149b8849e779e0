"""{% chart "psi" figure csv_url %}: a chart's card, titled and explained from its one
declaration (dashboard.meanings.CHARTS), with a link to the help page's entry."""

from django import template

from dashboard.meanings import CHARTS

register = template.Library()


@register.inclusion_tag("dashboard/_chart.html")
def chart(chart_id: str, figure, csv_url: str | None = None) -> dict:
    """The card of the chart ``chart_id`` (a key of CHARTS: a typo fails the page's render,
    not silently) with ``figure`` (dashboard.charts.figure_data, or None for no data)."""
    words = CHARTS[chart_id]
    return {
        "chart_id": chart_id,
        "title": words.title,
        "meaning": words.meaning,
        "figure": figure,
        "csv_url": csv_url,
    }
