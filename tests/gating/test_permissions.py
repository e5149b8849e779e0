"""Every API route with every role (and anonymous, and a bad token)."""

import pytest
from rest_framework.test import APIClient

from gating.roles import Role
from tests.factories import SubmissionFactory, TaskTypeFactory

ANON, BAD_TOKEN = "anonymous", "bad-token"
ROLES = [ANON, BAD_TOKEN, *Role]


def _client(who, user_in, client_for):
    if who == ANON:
        return APIClient()
    if who == BAD_TOKEN:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION="Bearer gh_not-a-real-token")
        return client
    return client_for(user_in(who))


ROUTES = {
    # (method, path, body): {role: expected status}
    ("post", "/api/v1/outputs/", "submission"): {
        Role.GATEWAY: 201, Role.REVIEWER: 403, Role.LEAD: 403, Role.ADMIN: 403,
    },
    ("post", "/api/v1/outputs/batch/", "batch"): {
        Role.GATEWAY: 201, Role.REVIEWER: 403, Role.LEAD: 403, Role.ADMIN: 403,
    },
    ("get", "/api/v1/outputs/", None): {
        Role.GATEWAY: 200, Role.REVIEWER: 200, Role.LEAD: 200, Role.ADMIN: 200,
    },
    ("get", "/api/v1/task-types/", None): {
        Role.GATEWAY: 200, Role.REVIEWER: 200, Role.LEAD: 200, Role.ADMIN: 200,
    },
    ("get", "/api/v1/task-types/summarize/", None): {
        Role.GATEWAY: 200, Role.REVIEWER: 200, Role.LEAD: 200, Role.ADMIN: 200,
    },
    ("patch", "/api/v1/task-types/summarize/", "thresholds"): {
        Role.GATEWAY: 403, Role.REVIEWER: 403, Role.LEAD: 403, Role.ADMIN: 200,
    },
    ("get", "/api/v1/ping/", None): {
        Role.GATEWAY: 200, Role.REVIEWER: 200, Role.LEAD: 200, Role.ADMIN: 200,
    },
    ("get", "/api/v1/queue/", None): {
        Role.GATEWAY: 403, Role.REVIEWER: 200, Role.LEAD: 200, Role.ADMIN: 200,
    },
    ("get", "/api/v1/queue/summary/", None): {
        Role.GATEWAY: 403, Role.REVIEWER: 200, Role.LEAD: 200, Role.ADMIN: 200,
    },
    # The queue is empty: a permitted claim finds nothing.
    ("post", "/api/v1/queue/claim/", None): {
        Role.GATEWAY: 403, Role.REVIEWER: 204, Role.LEAD: 204, Role.ADMIN: 204,
    },
    ("post", "/api/v1/queue/bulk-decision/", "bulk"): {
        Role.GATEWAY: 403, Role.REVIEWER: 403, Role.LEAD: 200, Role.ADMIN: 200,
    },
    # No such item: permitted roles get 404, the rest never learn that much.
    ("post", "/api/v1/queue/999999/heartbeat/", None): {
        Role.GATEWAY: 403, Role.REVIEWER: 404, Role.LEAD: 404, Role.ADMIN: 404,
    },
    ("post", "/api/v1/queue/999999/release/", None): {
        Role.GATEWAY: 403, Role.REVIEWER: 404, Role.LEAD: 404, Role.ADMIN: 404,
    },
    ("post", "/api/v1/queue/999999/decision/", "decision"): {
        Role.GATEWAY: 403, Role.REVIEWER: 404, Role.LEAD: 404, Role.ADMIN: 404,
    },
    ("get", "/api/schema/", None): {
        ANON: 200, BAD_TOKEN: 401, Role.GATEWAY: 200, Role.REVIEWER: 200, Role.LEAD: 200,
        Role.ADMIN: 200,
    },
}  # fmt: skip

BODIES = {
    None: None,
    "submission": lambda: SubmissionFactory(),
    "batch": lambda: {"outputs": [SubmissionFactory()]},
    "thresholds": lambda: {"review_threshold": 3.5},
    "bulk": lambda: {"action": "reject", "reason": "broken model"},
    "decision": lambda: {"action": "approve"},
}

CASES = [
    (route, who, expected.get(who, 401)) for route, expected in ROUTES.items() for who in ROLES
]


@pytest.mark.parametrize(
    ("route", "who", "expected"), CASES, ids=[f"{r[0]} {r[1]} as {w}" for r, w, _ in CASES]
)
def test_route_status_by_role(route, who, expected, user_in, client_for):
    TaskTypeFactory(name="summarize")
    method, path, body_kind = route
    client = _client(who, user_in, client_for)
    body = BODIES[body_kind]() if body_kind else None
    response = getattr(client, method)(path, body, format="json")
    assert response.status_code == expected, response.content


def test_gateway_sees_only_its_own_outputs(gateway_api, user_in, client_for):
    mine = gateway_api.post("/api/v1/outputs/", SubmissionFactory(), format="json").json()
    other = client_for(user_in(Role.GATEWAY))
    theirs = other.post("/api/v1/outputs/", SubmissionFactory(), format="json").json()

    assert gateway_api.get(f"/api/v1/outputs/{theirs['id']}/").status_code == 404
    listed = [o["id"] for o in gateway_api.get("/api/v1/outputs/").json()["results"]]
    assert listed == [mine["id"]]
    reviewer = client_for(user_in(Role.REVIEWER))
    assert reviewer.get(f"/api/v1/outputs/{theirs['id']}/").status_code == 200


def test_unknown_output_is_404(gateway_api):
    assert gateway_api.get("/api/v1/outputs/999999/").status_code == 404
