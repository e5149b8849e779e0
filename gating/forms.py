"""Django forms of the gate's settings, derived from their declaration (gating.gate_settings):
the admin's task type form and the thresholds page's form take each field from here.

A form reads each value into its type and says in words what it cannot read. The ranges and
the rule between the thresholds are the settings service's to check
(gating.services.gate_settings_problems), which skips a value equal to the stored one: a
range tightened since a value was stored must not block every other edit of its task type.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django import forms

from gating import scorers
from gating.gate_settings import BY_NAME, SETTINGS, GateSetting, Kind

WEIGHT_PREFIX = "weight:"


def setting_form_field(
    setting: GateSetting, *, choices: Sequence[tuple[str, str]] | None = None
) -> forms.Field:
    """The form field of one setting: its label and meaning, its type, and for a choice its
    choices (``choices`` in place of the declared ones)."""
    words = {"label": setting.label, "help_text": setting.meaning}
    if setting.kind is Kind.SWITCH:
        return forms.BooleanField(required=False, **words)
    if setting.kind is Kind.CHOICE:
        unknown = f"Must be one of: {', '.join(setting.values)}."
        return forms.ChoiceField(
            choices=choices if choices is not None else setting.choices,
            error_messages={"invalid_choice": unknown, "required": unknown},
            **words,
        )
    # Text, not type=number: a browser refuses "1e-3" or a typo without a word, where the
    # form and the service say what is wrong.
    if setting.kind is Kind.WHOLE:
        unreadable = "Must be a whole number."
        return forms.IntegerField(
            widget=forms.TextInput(attrs={"inputmode": "numeric"}),
            error_messages={"invalid": unreadable, "required": unreadable},
            **words,
        )
    unreadable = "Must be a number."
    return forms.FloatField(
        widget=forms.TextInput(attrs={"inputmode": "decimal"}),
        error_messages={"invalid": unreadable, "required": unreadable},
        **words,
    )


def scorer_choices(current: str | None) -> list[tuple[str, str]]:
    """Every registered scorer and, kept selectable, a task type's scorer this version no
    longer has: without it the browser would submit the first scorer, and saving any other
    setting would quietly switch the task type's scorer."""
    choices = list(BY_NAME["scorer"].choices())
    if current is not None and current not in scorers.REGISTRY:
        choices.append((current, f"{current} (not in this version)"))
    return choices


class GateSettingsForm(forms.Form):
    """The thresholds page's form: every setting the page edits, in the declared order, and
    each validator's weight as ``weight:<name>``."""

    def __init__(self, *args, scorer: str | None, validators: Iterable[str], **kwargs):
        super().__init__(*args, **kwargs)
        for setting in SETTINGS:
            if setting.on_page:
                choices = scorer_choices(scorer) if setting.name == "scorer" else None
                self.fields[setting.name] = setting_form_field(setting, choices=choices)
        for name in validators:
            self.fields[f"{WEIGHT_PREFIX}{name}"] = forms.FloatField(
                label=name,
                widget=forms.TextInput(attrs={"inputmode": "decimal"}),
                error_messages={"invalid": "Must be a number.", "required": "Must be a number."},
            )

    def settings_changes(self) -> dict[str, object]:
        """The settings as read (call after is_valid), by name."""
        return {
            name: value
            for name, value in self.cleaned_data.items()
            if not name.startswith(WEIGHT_PREFIX)
        }

    def weights(self) -> dict[str, float]:
        """The validators' weights as read, by validator name."""
        return {
            name.removeprefix(WEIGHT_PREFIX): value
            for name, value in self.cleaned_data.items()
            if name.startswith(WEIGHT_PREFIX)
        }
