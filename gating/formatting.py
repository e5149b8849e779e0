"""How stored JSON is shown to people: on the review page, the output's page and the admin."""

import json


def pretty_json(value) -> str:
    """Indented, keys sorted, non-ASCII kept as written. The text is not escaped here: it can
    hold model outputs, so every page escapes it where it is put into HTML."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
