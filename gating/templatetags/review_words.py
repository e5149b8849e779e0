"""How the review pages write codes for people."""

from django import template

from gating.reviews import reason_label

register = template.Library()

register.filter("reason_label", reason_label)
