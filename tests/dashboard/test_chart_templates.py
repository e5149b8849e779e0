"""The chart and filter bar partials, rendered as pages include them."""

import re
from datetime import UTC, datetime

from django.template.loader import render_to_string
from django.test import RequestFactory

from dashboard import charts
from dashboard.charts import ReviewerDay
from dashboard.filters import FilterInvalid, filter_parse

HOSTILE = "</script><script>alert(1)</script>"
NOW = datetime(2025, 5, 10, 12, 0, tzinfo=UTC)


def chart_html(**context) -> str:
    return render_to_string("dashboard/_chart.html", context)


def a_figure(reviewer: str = "ann") -> dict:
    fig = charts.reviewer_decisions_chart([ReviewerDay(NOW.date(), reviewer, 3)])
    return charts.figure_data(fig)


def test_a_chart_is_a_div_pointing_at_its_figure_json():
    html = chart_html(chart_id="decisions", title="Decisions per day", figure=a_figure())
    assert '<div class="chart" data-figure-id="decisions-figure"' in html
    assert '<script id="decisions-figure" type="application/json">' in html
    assert "<h2>Decisions per day</h2>" in html
    assert "No data in this range." not in html


def test_untrusted_names_in_the_figure_cannot_close_its_script():
    html = chart_html(chart_id="decisions", title="Decisions", figure=a_figure(HOSTILE))
    assert "<script>alert(1)" not in html
    assert html.count("</script>") == 1
    # Escaped for plotly.js by the chart, then for HTML by json_script.
    assert r"\u0026lt;/script\u0026gt;" in html


def test_the_partial_escapes_whatever_figure_it_is_given():
    figure = {"data": [], "layout": {"title": {"text": HOSTILE}}}
    html = chart_html(chart_id="decisions", title=HOSTILE, figure=figure)
    assert "<script>alert(1)" not in html
    assert html.count("</script>") == 1
    assert r"\u003C/script\u003E" in html


def test_no_figure_says_there_is_no_data_in_this_range():
    html = chart_html(chart_id="decisions", title="Decisions", figure=None, csv_url="/x.csv")
    assert "No data in this range." in html
    assert "data-figure-id" not in html
    assert "x.csv" not in html


def test_the_csv_link_goes_in_its_slot():
    html = chart_html(chart_id="d", title="Decisions", figure=a_figure(), csv_url="/d.csv?range=7d")
    assert '<a href="/d.csv?range=7d" download>' in html
    assert "CSV" not in chart_html(chart_id="d", title="Decisions", figure=a_figure())


def test_the_scripts_load_plotly_from_our_static_files_then_charts_js():
    html = render_to_string("dashboard/_chart_scripts.html")
    sources = re.findall(r'<script src="([^"]+)" defer></script>', html)
    assert sources == ["/static/vendor/plotly.min.js", "/static/js/charts.js"]


def filter_bar(query: str = "", error: FilterInvalid | None = None) -> str:
    request = RequestFactory().get("/dashboard/?" + query)
    dashboard_filter = filter_parse(
        request.GET, task_types=["qa", "summary"], models=["small"], now=NOW
    )
    context = {
        "dashboard_filter": dashboard_filter,
        "task_type_names": ["qa", "summary"],
        "model_names": ["small"],
        "filter_error": error,
    }
    return render_to_string("dashboard/_filter_bar.html", context, request=request)


def test_the_filter_bar_submits_by_get_and_shows_the_filter_in_force():
    html = filter_bar("range=30d&task_type=summary")
    assert '<form method="get"' in html
    assert '<option value="30d" selected>Last 30 days</option>' in html
    assert '<option value="summary" selected>summary</option>' in html
    assert '<option value="qa">qa</option>' in html
    # The preset's times, shown but disabled, so that the form does not send them beside it.
    assert re.search(r'name="since" value="2025-04-10 12:00"[^>]* disabled>', html)
    assert re.search(r'name="until" value="2025-05-10 12:00"[^>]* disabled>', html)


def test_the_filter_bar_shows_a_custom_range_in_utc():
    html = filter_bar("since=2025-05-01T09:30%2B02:00&until=2025-05-02")
    assert '<option value="custom" selected>Custom range</option>' in html
    # 24-hour text, whatever the browser's locale: a datetime-local input would follow it.
    assert re.search(r'type="text" name="since" value="2025-05-01 07:30"[^>]*autocomplete', html)
    assert 'name="until" value="2025-05-02 00:00"' in html
    assert "disabled" not in html


def test_the_filter_bar_says_what_was_wrong_and_where():
    html = filter_bar(error=FilterInvalid("model", 'Unknown model "<b>huge</b>".'))
    assert 'data-field="model"' in html
    assert "Unknown model &quot;&lt;b&gt;huge&lt;/b&gt;&quot;." in html
