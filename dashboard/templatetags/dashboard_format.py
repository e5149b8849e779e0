"""dashboard.formatting as template filters: numbers as people read them."""

from django import template

from dashboard import formatting

register = template.Library()


@register.filter
def percent(value):
    return "–" if value is None else formatting.percent(value)


@register.filter
def count(value):
    return "–" if value is None else formatting.count(value)


@register.filter
def duration(value):
    return "–" if value is None else formatting.duration(value)
