"""schemathesis hooks for the contract run: the only failures it may leave out, and why.

``positive_data_acceptance`` sends requests the schema allows and expects them taken. A
few of the API's rules cannot be written in OpenAPI (JSON Schema relates no two values,
knows no stored row, and reads 4.0 as an integer), so a request that follows the schema can
still break one of them and get its 400. Those 400s are left out, and only when every error
in the answer is one of the rules below, under its field: any other 400 on valid data, and
every failure of every other check, still fails the run. The run's report counts what was
left out (``RoleRun.dropped``).

Loaded by schemathesis from this file (``runner.config_toml``), in its own process: no
Django here.
"""

from __future__ import annotations

import re

import schemathesis

# (field, message): the server's words for a rule beyond the schema. Fields are the error
# body's keys, a batch item's or a nested one's by their last part.
BEYOND_THE_SCHEMA: list[tuple[str, str]] = [
    # A cursor is one the server handed out: no pattern tells a tampered one from it.
    (r"cursor", r"Invalid cursor: pass a next or previous link's cursor unchanged\."),
    # The review threshold stays below the approve one, as stored or as sent with it.
    (r"(review|approve)_threshold", r"Must be (below|above) (approve|review)_threshold .*"),
    # JSON Schema's integer includes 4.0; the API takes an integer written as one.
    (r".*", r"Must be a JSON integer\."),
    (r".*", r"Input should be a valid integer"),
    # Items keyed by a name are unique by it; JSON Schema's uniqueItems compares whole items.
    (r"validators", r"duplicate validator names: .*"),
    (r"external_id", r"Repeats item \d+ of this batch\."),
    # Two values of one item.
    (r".*entries\.\d+", r"exact_match_count must not exceed match_count"),
    # A JSON value's depth: the schema of a free-form object has none.
    (r".*", r"is nested deeper than \d+ levels"),
    # The dashboard's filter: a range that ends after it starts, and names it has seen. The
    # queue's filter names task types that exist, in the same words: an enum of them in the
    # schema, which anyone may read, would publish every gateway's task types.
    (r"until", r"until \(.*\) must be later than since \(.*\)\."),
    (r"task_type|model", r'Unknown (task type|model) ".*"\.'),
    # Scores from score_min up to below score_max (gating.selectors.score_band_problem).
    (r"score_max", r"score_max \(.*\) must be above score_min \(.*\): .*"),
    # A preset range or times, not both: OpenAPI's parameters cannot exclude one another.
    (r"range", r"range=\S+ is a preset ending now, so it cannot be given with .*"),
    # A decision's scores follow the rubric in force of the item's task type, a stored row:
    # its dimensions, their ranges and choices, which are required, and its version. In a
    # form, the scores are JSON text, whose content a string's schema cannot describe.
    (
        r"scores(\..*)?",
        r"(Not a dimension of the rubric; .*|Required: score .*|Must be a number from .*"
        r"|Must be one of: .*|Must be true or false\.|This task type has no rubric: .*"
        r"|Must be an object of dimension names and values\.|Value must be valid JSON\.)",
    ),
    (
        r"rubric_version",
        r"(The rubric is now version \d+, not \d+: .*|This task type has no rubric\.)",
    ),
    # A rubric's dimensions: names unique within it, a range that ends above its start,
    # choices listed once, and texts that are not blank once stripped and hold no NUL.
    (
        r"dimensions(\[\d+\]\.\w+(\[\d+\])?)?|instructions",
        r'(".*" is named twice\.|Must be above the minimum\.|Each choice must be listed once\.'
        r"|Must not be empty\.|Must not contain NUL \(\\u0000\) characters\.)",
    ),
    # Datasets: a name not taken, task types that exist (an enum would publish them), a
    # score condition's two bounds, a range of decision times, outputs whose label is
    # settled (a stored row's state), and the chat format of a version with its fields.
    (r"name", r"A dataset of that name exists\."),
    (r"filter\.task_types", r"No task type .*\."),
    (r"filter\.scores\[\d+\]\.max", r"Must not be below min\."),
    (r"filter\.decided_before", r"Must be after decided_after\."),
    (r"filter\.decided_(after|before)", r"An ISO 8601 date and time with its offset\."),
    (r"output_ids", r"Not an output whose label is settled by a person's review: .*"),
    (r"format", r"The chat format needs the fields input and corrected\."),
]
_RULES = [(re.compile(field), re.compile(message)) for field, message in BEYOND_THE_SCHEMA]


def errors(body, path: str = "") -> list[tuple[str, str]]:
    """(field, message) of each error in a 400's body, nested ones by their last key."""
    if isinstance(body, list):
        return [(path, str(message)) for message in body]
    if isinstance(body, dict):
        return [pair for key, value in body.items() for pair in errors(value, str(key))]
    return [(path, str(body))]


def beyond_the_schema(body) -> bool:
    """Whether every error in ``body`` is one of the rules the schema cannot state."""
    found = errors(body)
    return bool(found) and all(
        any(field.fullmatch(name) and message.fullmatch(text) for field, message in _RULES)
        for name, text in found
    )


@schemathesis.hook
def filter_failure(context, failure, case, response) -> bool:
    if type(failure).__name__ != "RejectedPositiveData" or response.status_code != 400:
        return True
    try:
        body = response.json()
    except ValueError:
        return True
    return not beyond_the_schema(body)
