"""gating.formatting as template filters: values as people read them, on every page."""

from django import template
from django.utils.safestring import mark_safe

from gating import formatting, rubrics
from gating.reviews import reason_label

register = template.Library()

register.filter("reason_label", reason_label)


@register.filter
def percent(value):
    return "–" if value is None else formatting.percent(value)


@register.filter
def count(value):
    return "–" if value is None else formatting.count(value)


@register.filter
def duration(value):
    return "–" if value is None else formatting.duration(value)


@register.filter
def waited(since, now):
    """``{{ item.queued_at|waited:now }}``: "13 d 8 h", as every page and alert writes it."""
    return "–" if since is None or now is None else formatting.waited(since, now)


@register.filter
def utc(moment):
    """``{{ alert.first_seen|utc }}``: "2026-11-28 14:05 UTC"."""
    return "–" if moment is None else formatting.utc_time(moment)


@register.filter
def rubric_instructions(markdown: str):
    """``{{ rubric.instructions|rubric_instructions }}``: the Markdown as HTML, rendered
    without raw HTML and sanitised (gating.rubrics.instructions_html), so safe to show."""
    return mark_safe(rubrics.instructions_html(markdown))


@register.filter
def score_value(value) -> str:
    """A rubric score as people read it: yes or no for a boolean, the value otherwise."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    # As the reviewer gave it: 4 is "4", 3.5 is "3.5", not a rounded measure.
    return f"{value:g}" if isinstance(value, int | float) else str(value)
