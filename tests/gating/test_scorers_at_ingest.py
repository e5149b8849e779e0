"""The scorers at ingest: the task type's scorer decides, the others score in shadow, the
queue finds wide intervals, and bad evidence or an unknown scorer is refused by name."""

import copy
import json

import pytest
from django.test import Client, override_settings

from gating import reviews
from gating.models import AuditEvent, Output, ReviewItem, TaskType
from gating.roles import Role
from gating.submissions import EVIDENCE_EXAMPLE, PROVENANCE_EXAMPLE
from tests.factories import SubmissionFactory, TaskTypeFactory, UserFactory

URL = "/api/v1/outputs/"
FAILING = [{"name": name, "passed": False} for name in ("facts", "schema", "grammar", "length")]
PASSING = [{"name": name, "passed": True} for name in ("facts", "schema", "grammar", "length")]

# Seed 001's first failing benchmark: "evidence gating" grepped word by word, then the
# first file listed read. FileSearch is only Weak, so a Locate is short of its requirement.
TOKENISED_GREP = {
    "intent": "locate",
    "entries": [
        {"tool": "grep", "query": "evidence gating", "target": "evidence gating",
         "match": "token", "match_count": 40},
        {"tool": "read", "target": "src/evidence.cpp", "outcome": "first_listed"},
    ],
}  # fmt: skip
# One source of 0.95: the interval is [0.95 x (0.5 + 0.5/3), 0.95] = [0.633, 0.95], 3.17
# points wide. Three sources of three types: [0.9 x 1, 1 - 0.1 x 0.2 x 0.3] = [0.9, 0.994].
WIDE = {"sources": [{"source_type": "extraction", "confidence": 0.95}]}
NARROW = {
    "sources": [
        {"source_type": "extraction", "confidence": 0.9},
        {"source_type": "user_input", "confidence": 0.8},
        {"source_type": "agent_assertion", "confidence": 0.7},
    ]
}


def post(client, body):
    return client.post(URL, body, format="json")


@pytest.fixture
def code_locate(db):
    # Cold start off and thresholds fixed, so that the scorer alone decides.
    return TaskTypeFactory(name="code_locate", scorer="evidence_quality", cold_start_margin=0.0)


def test_the_task_types_scorer_decides_and_the_others_shadow_it(gateway_api, code_locate):
    body = SubmissionFactory(task_type="code_locate", validators=PASSING, evidence=TOKENISED_GREP)
    data = post(gateway_api, body).json()

    assert data["scorer"] == "evidence_quality-v1"
    assert data["decision"] == "pending_review"
    assert data["reasons"][0].startswith("Confidence is Low")
    # Low's band midpoint, shown as the score.
    assert data["score"] == 3.0
    # The validators scorer would have approved it: every validator passed.
    assert data["shadow_scores"]["validators"]["score"] > code_locate.approve_threshold
    assert "evidence_categories" in data["shadow_scores"]
    assert "interval" not in data["shadow_scores"]  # no provenance sent
    assert data["interval"] is None


def test_strong_evidence_is_approved_whatever_the_validators_say(gateway_api, code_locate):
    body = SubmissionFactory(task_type="code_locate", validators=FAILING, evidence=EVIDENCE_EXAMPLE)
    data = post(gateway_api, body).json()

    assert data["decision"] == "approved"
    assert data["shadow_scores"]["validators"]["score"] < code_locate.review_threshold


def test_the_validators_score_in_shadow_is_the_one_it_gives_when_it_decides(gateway_api, db):
    TaskTypeFactory(name="plain", cold_start_margin=0.0)
    TaskTypeFactory(name="agentic", scorer="interval", cold_start_margin=0.0)
    deciding = post(gateway_api, SubmissionFactory(task_type="plain")).json()
    shadowed = post(gateway_api, SubmissionFactory(task_type="agentic", provenance=NARROW)).json()

    assert shadowed["shadow_scores"]["validators"]["score"] == deciding["score"]
    # ADR-0003's formula applies to every output; nothing else applies to this one.
    assert set(deciding["shadow_scores"]) == {"adr0003_formula"}
    assert shadowed["score"] == pytest.approx(9.0)  # 10 x the lower bound 0.9
    assert shadowed["interval"] == {"lower": 9.0, "upper": 9.94, "wide": False}


def test_an_output_without_what_the_scorer_reads_is_scored_by_validators(gateway_api, code_locate):
    data = post(gateway_api, SubmissionFactory(task_type="code_locate")).json()

    assert data["scorer"] == "validators-v2"
    assert data["reasons"][0] == (
        "The payload lacks what evidence_quality reads, so the validators scorer scored it."
    )


def test_every_applicable_scorer_shadows_and_the_interval_is_kept(gateway_api, db):
    TaskTypeFactory(name="plain")
    body = SubmissionFactory(task_type="plain", evidence=EVIDENCE_EXAMPLE, provenance=WIDE)
    data = post(gateway_api, body).json()

    assert set(data["shadow_scores"]) == {
        "evidence_categories",
        "evidence_quality",
        "interval",
        "adr0003_formula",
    }
    assert data["shadow_scores"]["evidence_quality"]["level"] in {"high", "complete"}
    assert data["shadow_scores"]["interval"]["interval"] == pytest.approx([6.3333, 9.5], abs=1e-4)
    assert data["interval"]["wide"] is True
    stored = Output.objects.get(pk=data["id"])
    assert stored.provenance["sources"][0]["confidence"] == 0.95
    assert stored.interval_lower == pytest.approx(6.3333, abs=1e-4)


@override_settings(SHADOW_SCORING=False)
def test_shadow_scoring_can_be_turned_off(gateway_api, db):
    TaskTypeFactory(name="plain")
    body = SubmissionFactory(task_type="plain", evidence=EVIDENCE_EXAMPLE, provenance=WIDE)
    data = post(gateway_api, body).json()
    assert data["shadow_scores"] == {}
    assert data["interval"] is None


@pytest.mark.parametrize(
    ("evidence", "field", "words"),
    [
        ({"entries": [{"tool": "curl"}]}, "evidence.entries.0.tool", "Input should be"),
        ({"entries": [{"tool": "git", "outcome": "no_op"}]}, "evidence.entries.0",
         "not one of git's"),
        ({"entries": [{"tool": "grep", "match_count": "4"}]}, "evidence.entries.0.match_count",
         "valid integer"),
        ({"entries": [{"tool": "read", "match": "exact"}]}, "evidence.entries.0", "match is for"),
        ({"intent": "guess", "entries": []}, "evidence.intent", "Input should be"),
        ({"entries": [], "extra": 1}, "evidence.extra", "Unknown field."),
    ],
)  # fmt: skip
def test_bad_evidence_is_400_naming_the_field_and_nothing_is_stored(
    gateway_api, db, evidence, field, words
):
    response = post(gateway_api, SubmissionFactory(evidence=evidence))
    assert response.status_code == 400
    assert words in " ".join(response.json()[field])
    assert not Output.objects.exists()


@pytest.mark.parametrize(
    ("provenance", "field"),
    [
        ({"sources": []}, "provenance.sources"),
        ({"sources": [{"source_type": "x", "confidence": 1.5}]}, "provenance.sources.0.confidence"),
        ({**WIDE, "staleness_at": 1767225600}, "provenance.staleness_at"),
        ({**WIDE, "staleness_at": "2026-01-01T00:00:00"}, "provenance.staleness_at"),
        ({**WIDE, "tier": "forever"}, "provenance.tier"),
        ({**WIDE, "supporting": [{"sources": WIDE["sources"]}]},
         "provenance.supporting.0.strength"),
    ],
)  # fmt: skip
def test_bad_provenance_is_400_naming_the_field(gateway_api, db, provenance, field):
    response = post(gateway_api, SubmissionFactory(provenance=provenance))
    assert response.status_code == 400
    assert field in response.json()
    assert not Output.objects.exists()


def test_an_unknown_scorer_is_400_and_a_known_one_is_audited(admin_api, db):
    TaskTypeFactory(name="summarize")
    url = "/api/v1/task-types/summarize/"
    refused = admin_api.patch(url, {"scorer": "magic"}, format="json")
    assert refused.status_code == 400
    assert refused.json() == {
        "scorer": [
            '"magic" is not a choice of scorer; one of: '
            "validators, evidence_categories, evidence_quality, interval, adr0003_formula."
        ]
    }
    assert TaskType.objects.get(name="summarize").scorer == "validators"

    accepted = admin_api.patch(url, {"scorer": "interval", "reason": "claims"}, format="json")
    assert accepted.status_code == 200
    assert accepted.json()["scorer"] == "interval"
    event = AuditEvent.objects.get(action="threshold_edit")
    assert (event.before["scorer"], event.after["scorer"]) == ("validators", "interval")


def test_the_schema_documents_evidence_and_provenance_with_examples(gateway_api, db):
    schema = json.loads(Client().get("/api/schema/", {"format": "json"}).content)
    components = schema["components"]["schemas"]
    assert components["EvidenceIn"]["examples"] == [EVIDENCE_EXAMPLE]
    assert components["ProvenanceIn"]["examples"] == [PROVENANCE_EXAMPLE]
    assert components["EvidenceEntryIn"]["properties"]["tool"] == {
        "$ref": "#/components/schemas/Tool"
    }
    assert set(components["Tool"]["enum"]) == {
        "find", "grep", "references", "read", "discovery", "cmake", "ctest", "git", "gh",
    }  # fmt: skip
    output_result = components["OutputResult"]["properties"]
    assert {"shadow_scores", "interval", "scorer"} <= set(output_result)


# --------------------------------------------------------------------------- the queue


@pytest.fixture
def held(gateway_api, db):
    """Held outputs: one with a wide interval, one with a narrow one, one without."""
    TaskTypeFactory(name="claims", reviewed_count=0)  # cold start: everything is held
    ids = {}
    for name, provenance in (("wide", WIDE), ("narrow", NARROW), ("none", None)):
        body = SubmissionFactory(task_type="claims", external_id=name, provenance=provenance)
        ids[name] = post(gateway_api, body).json()["id"]
    return ids


def test_the_queue_finds_the_wide_intervals(held, user_in, client_for):
    reviewer = client_for(user_in(Role.REVIEWER))

    def listed(query):
        response = reviewer.get(f"/api/v1/queue/?{query}")
        assert response.status_code == 200, response.json()
        return {row["output_id"] for row in response.json()["results"]}

    assert listed("uncertain=true") == {held["wide"]}
    # An output without an interval is not wide: it is among the others, not in neither.
    assert listed("uncertain=false") == {held["narrow"], held["none"]}
    assert listed("") == {held["wide"], held["narrow"], held["none"]}
    refused = reviewer.get("/api/v1/queue/?uncertain=yes")
    assert refused.status_code == 400
    assert "uncertain" in refused.json()


def test_the_review_page_draws_the_interval_and_the_shadow_scores(held):
    reviewer = UserFactory(role=Role.REVIEWER)
    wide = ReviewItem.objects.get(output_id=held["wide"])
    reviews.item_claim(reviewer=reviewer, items=ReviewItem.objects.filter(pk=wide.pk))
    client = Client()
    client.force_login(reviewer)

    page = client.get(f"/review/{wide.pk}/").content.decode()

    assert 'id="interval"' in page
    # [6.33, 9.5] on 0-10: starts at 63.33% of the bar and spans 31.67%.
    assert 'x="63.33" y="1" width="31.67"' in page
    assert "wide: uncertain, worth investigating" in page
    assert 'id="shadow-scores"' in page and "<td>interval</td>" in page
    assert 'id="provenance"' in page


def _next_review_page() -> tuple[ReviewItem, str]:
    """A reviewer claims the next item: the item, and its review page as they see it."""
    reviewer = UserFactory(role=Role.REVIEWER)
    item = reviews.item_claim(reviewer=reviewer)
    client = Client()
    client.force_login(reviewer)
    return item, client.get(f"/review/{item.pk}/").content.decode()


def test_provenance_is_escaped_on_the_review_page(gateway_api, db):
    TaskTypeFactory(name="claims", reviewed_count=0)
    hostile = copy.deepcopy(WIDE)
    hostile["sources"][0]["source"] = "<script>window.__xss=1</script>"
    data = post(gateway_api, SubmissionFactory(task_type="claims", provenance=hostile)).json()
    item, page = _next_review_page()

    assert item.output_id == data["id"]
    assert "<script>window" not in page
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in page


def test_a_deciding_evidence_scorers_words_are_escaped_on_the_review_page(gateway_api, db):
    # The summary and impacts name the agent's target ("... agree on <term>"), which is
    # untrusted text from the payload.
    TaskTypeFactory(name="locate", reviewed_count=0, scorer="evidence_categories")
    hostile = copy.deepcopy(EVIDENCE_EXAMPLE)
    for entry in hostile["entries"]:
        entry["target"] = entry["query"] = "<img src=x onerror=window.__xss=1>"
    data = post(gateway_api, SubmissionFactory(task_type="locate", evidence=hostile)).json()
    assert data["scorer"] == "evidence_categories-v1"
    assert "<img src=x onerror=window.__xss=1>" in data["reasons"][0]
    item, page = _next_review_page()

    assert item.output_id == data["id"]
    assert "<img src=x" not in page
    assert "agree on &lt;img src=x onerror=window.__xss=1&gt;" in page


def test_the_queue_page_filters_the_wide_intervals_as_the_api_does(held, user_in):
    client = Client()
    client.force_login(user_in(Role.REVIEWER))
    item_of = {name: ReviewItem.objects.get(output_id=pk).pk for name, pk in held.items()}

    def shown(query):
        response = client.get(f"/queue/table/?{query}")
        assert response.status_code == 200
        page = response.content.decode()
        return {name for name, pk in item_of.items() if f"<td>{pk}</td>" in page}

    assert shown("uncertain=true") == {"wide"}
    assert shown("uncertain=false") == {"narrow", "none"}
    assert shown("") == {"wide", "narrow", "none"}
    # The page names the field; its polled table says the filters are not valid.
    refused = client.get("/queue/?uncertain=yes")
    assert refused.status_code == 400
    assert 'id="id_uncertain_error"' in refused.content.decode()
    assert client.get("/queue/table/?uncertain=yes").status_code == 400
