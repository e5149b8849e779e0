"""Every dashboard page, for each of the four roles, against hostile parameters: NUL bytes,
times at the ends of the calendar, digits of other scripts, long strings, negative and huge
numbers, empty and repeated values. No answer is a 5xx; a 400 names a parameter it was sent
and stores nothing.

The pages are not listed here. Every route of the URL conf whose view is the dashboard's is
opened as an admin, and the links and forms the pages draw say which parameters each route
takes and which values its forms send (the API's routes: its schema). A route that no page
reaches fails the test, so a new page is covered once it is routed and linked.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import parse_qsl, urljoin, urlsplit

import pytest
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.urls.exceptions import Resolver404
from django.utils import timezone
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dashboard.rollups import queue_snapshot_take, rollups_refresh
from gating import services
from gating.models import AuditEvent, OutboxMessage
from gating.roles import Role
from learning.models import Alert, CycleRun, Dataset
from tests.factories import TaskTypeFactory, UserFactory, valid_submission

# Slow (every page under generated parameters): `make check` leaves it out.
pytestmark = [pytest.mark.slow, pytest.mark.django_db]

# More than a page of outputs, so that the outputs page links to the next one.
OUTPUTS = 51
# A name no page takes: pages leave it alone, the metrics API refuses it by name.
UNKNOWN = "colour"

HOSTILE = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "%00",
    "0001-01-01",
    "0001-01-01T00:00",
    "0001-01-01T00:00:00+01:00",
    "1999-12-31T23:59Z",
    "9999-12-31",
    "9999-12-31T23:59:59.999999",
    "9999-12-31T23:59:59-01:00",
    "2025-02-30",
    "²",
    "١٢",
    "٣.٥",
    "-1",
    "-0",
    "0",
    "1e309",
    "nan",
    "-inf",
    "9223372036854775808",
    "99999999999999999999999",
    "x" * 5000,
    "é" * 300,
    "<script>alert(1)</script>",
    "\r\nX-Injected: 1",
    "../../etc/passwd",
    "custom",
    "24h",
]
hostile_values = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(max_size=30),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.datetimes().map(lambda moment: moment.isoformat()),
)

# The values that found the faults these tests guard against, sent in each parameter of
# each door by the sweep below.
SHARPEST = ["a\x00b", "0001-01-01", "²"]


# --------------------------------------------------------------------------- the site


@dataclass
class Door:
    """One way into a route: the concrete paths seen (with the query string a form posts
    to), the method, every parameter name seen sent to it, and the values the first link or
    form sent, to start from."""

    route: str
    method: str
    paths: list[str] = field(default_factory=list)
    names: set[str] = field(default_factory=set)
    values: dict[str, list[str]] = field(default_factory=dict)


def dashboard_routes() -> dict[str, str]:
    """Every named route of the URL conf whose view is the dashboard's, by name, with its
    pattern."""
    found: dict[str, str] = {}

    def walk(patterns, prefix: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern) and pattern.name:
                view = getattr(pattern.callback, "view_class", pattern.callback)
                if view.__module__.split(".")[0] == "dashboard":
                    found[pattern.name] = prefix + str(pattern.pattern)

    walk(get_resolver().url_patterns, "/")
    return found


class _PageReader(HTMLParser):
    """The links and forms of a page, each form's fields with the values it would send,
    and the page's error messages."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.forms: list[dict] = []
        self.errors: list[list[str]] = []  # [data-field, text] of each error element
        self._error_depth = 0
        # The select being read: its name, whether it takes several, its options' values
        # and those selected.
        self._select: tuple[str, bool, list[str], list[str]] | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        a = {name: value or "" for name, value in attrs}
        if self._error_depth:
            self._error_depth += 1
        elif "error" in a.get("class", "").split():
            self._error_depth = 1
            self.errors.append([a.get("data-field", ""), ""])
        fields = self.forms[-1]["fields"] if self.forms else {}
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        elif tag == "form":
            action = a.get("hx-get") or a.get("action", "")
            self.forms.append({"method": a.get("method", "get").upper(), "action": action})
            self.forms[-1]["fields"] = {}
        elif tag == "input" and a.get("name"):
            sent = a.get("type") not in ("checkbox", "radio") or "checked" in a
            fields.setdefault(a["name"], []).extend([a.get("value", "")] if sent else [])
        elif tag == "select" and a.get("name"):
            self._select = (a["name"], "multiple" in a, [], [])
        elif tag == "option" and self._select:
            _, _, options, selected = self._select
            (selected if "selected" in a else options).append(a.get("value", ""))
        elif tag == "textarea" and a.get("name"):
            self._textarea = a["name"]
            fields[a["name"]] = [""]

    def handle_endtag(self, tag):
        if self._error_depth:
            self._error_depth -= 1
        if tag == "select" and self._select and self.forms:
            # As a browser sends it: the selected options, or else a single select's first.
            name, several, options, selected = self._select
            self.forms[-1]["fields"][name] = selected or ([] if several else options[:1])
            self._select = None
        elif tag == "textarea":
            self._textarea = None

    def handle_data(self, data):
        if self._error_depth:
            self.errors[-1][1] += data
        if self._textarea and self.forms:
            self.forms[-1]["fields"][self._textarea] = [data]


def _route_of(path: str) -> str | None:
    try:
        return resolve(path).url_name
    except Resolver404:
        return None


def _schema_names(client: Client) -> dict[tuple[re.Pattern, str], set[str]]:
    """The query parameters the API's schema declares, by path (as a pattern) and method."""
    schema = client.get("/api/schema/", {"format": "json"}).json()
    return {
        (re.compile(re.sub(r"\{[^}]+\}", "[^/]+", path) + "$"), method.upper()): {
            p["name"] for p in operation.get("parameters", []) if p["in"] == "query"
        }
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
    }


def doors_discover(client: Client, routes: dict[str, str]) -> list[Door]:
    """Open every dashboard route without parameters in its path, then every page their
    links and forms reach, once per route; each link and form becomes a door."""
    doors: dict[tuple[str, str], Door] = {}
    to_open = [p for p in routes.values() if "<" not in p]
    opened: set[str] = set()

    def seen(url: str, method: str, values: dict[str, list[str]]) -> None:
        parts = urlsplit(url)
        route = _route_of(parts.path)
        if route not in routes:
            return
        door = doors.setdefault((route, method), Door(route, method))
        path = parts.path + (f"?{parts.query}" if method == "POST" and parts.query else "")
        if path not in door.paths:
            door.paths.append(path)
        query = parse_qsl(parts.query, keep_blank_values=True)
        door.names |= {name for name, _ in query} | set(values)
        if not door.values:
            door.values = {name: [v for n, v in query if n == name] for name, _ in query}
            door.values |= values
        if method == "GET" and route not in opened:
            to_open.append(parts.path)

    while to_open:
        path = to_open.pop(0)
        route = _route_of(path)
        if route in opened:
            continue
        opened.add(route)
        response = client.get(path)
        if response.status_code == 405:
            continue  # a form's target: its form is the door
        assert response.status_code == 200, (path, response.status_code)
        seen(path, "GET", {})
        if not response["Content-Type"].startswith("text/html"):
            continue
        page = _PageReader()
        page.feed(response.content.decode())
        for href in page.links:
            seen(urljoin(path, href), "GET", {})
        for form in page.forms:
            fields = {k: v for k, v in form["fields"].items() if k != "csrfmiddlewaretoken"}
            seen(urljoin(path, form["action"]), form["method"], fields)

    declared = _schema_names(client)
    for door in doors.values():
        for (pattern, method), names in declared.items():
            if method == door.method and pattern.match(door.paths[0].split("?")[0]):
                door.names |= names
    return list(doors.values())


@pytest.fixture
def site(gateway) -> list[Door]:
    """Some of everything the pages show (a task type's outputs over a page, held and
    rolled up, a queue snapshot, an open alert), and the doors into the pages."""
    TaskTypeFactory(name="summarize", reviewed_count=0, double_review_rate=0.0)
    submissions = [
        valid_submission(task_type="summarize", model=f"model-{n % 2}") for n in range(OUTPUTS)
    ]
    services.output_ingest_batch(source=gateway, submissions=submissions)
    rollups_refresh()
    queue_snapshot_take()
    now = timezone.now()
    Alert.objects.create(
        rule=Alert.Rule.BACKLOG,
        subject="review queue",
        message="51 items waiting.",
        value=30.0,
        limit=24.0,
        link="/dashboard/queue/",
        first_seen=now,
        last_seen=now,
    )
    # A dataset, so that its page, its snapshot form and the output page's "Add to
    # dataset" form are linked.
    Dataset.objects.create(name="fuzzed", filter={}, fields=["input"], created_at=now)
    routes = dashboard_routes()
    admin = Client(raise_request_exception=False)
    admin.force_login(UserFactory(role=Role.ADMIN))
    doors = doors_discover(admin, routes)
    unreached = set(routes) - {door.route for door in doors}
    assert not unreached, f"no dashboard page links to {sorted(unreached)}"
    return doors


@pytest.fixture
def clients(db) -> dict[Role, Client]:
    made = {}
    for role in Role:
        made[role] = Client(raise_request_exception=False)
        made[role].force_login(UserFactory(role=role))
    return made


# --------------------------------------------------------------------------- the checks


def _stored() -> tuple:
    """What a refused request must leave as it was: every page's write is audited or queues
    a cycle."""
    return (
        AuditEvent.objects.count(),
        CycleRun.objects.count(),
        OutboxMessage.objects.count(),
        list(Alert.objects.order_by("pk").values_list("state", "note")),
    )


def _mentions(text: str, names: set[str]) -> bool:
    return any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) for name in names)


def _names_a_parameter(response, sent: set[str]) -> bool:
    """The error names one of the parameters sent: a JSON error by its keys, a page by an
    error element's data-field or its words, a plain message (no markup) by its words."""
    body = response.content.decode(errors="replace")
    if response["Content-Type"].startswith("application/json"):
        return bool(set(json.loads(body)) & sent)
    page = _PageReader()
    page.feed(body)
    if not page.errors:
        return "<" not in body and _mentions(body, sent)
    return any(field in sent or _mentions(text, sent) for field, text in page.errors)


def _check(client: Client, who: str, door: Door, path: str, params: dict) -> None:
    """Send ``params`` through ``door`` at ``path``, and roll back whatever the request
    wrote, so that every request meets the site as it was built."""
    sent = set(params) | {name for name, _ in parse_qsl(urlsplit(path).query)}
    where = f"{who} {door.method} {path} {params!r:.300}"
    with transaction.atomic():
        before = _stored()
        send = client.get if door.method == "GET" else client.post
        response = send(path, params)
        assert response.status_code < 500, where
        if response.status_code == 400:
            assert _names_a_parameter(response, sent), (where, response.content[:2000])
        if response.status_code >= 400:
            assert _stored() == before, where
        transaction.set_rollback(True)


def test_every_parameter_of_every_page_refuses_the_sharpest_values(site, clients):
    """Each of SHARPEST in each parameter: alone to a page (a link's range=7d would hide a
    since), with the rest of its form to a form's target."""
    admin = clients[Role.ADMIN]  # who may open every page and send every form
    for door in site:
        base = door.values if door.method == "POST" else {}
        for name in sorted(door.names):
            for value in SHARPEST:
                _check(admin, Role.ADMIN, door, door.paths[0], base | {name: [value]})


def _hostile_params(door: Door, vocabulary: list[str], data: st.DataObject) -> dict:
    """A door's parameters, from its page's values or none, some replaced or added with
    hostile values (each may be repeated). The names are mostly the door's own, and
    sometimes any page's (``vocabulary``): one filter vocabulary serves every page, and a
    page must ignore, or name, what it does not take."""
    own = sorted(door.names | {UNKNOWN})
    start = data.draw(st.sampled_from([{}, door.values] if door.method == "GET" else [door.values]))
    changed = data.draw(
        st.dictionaries(
            st.sampled_from(own) | st.sampled_from(vocabulary),
            st.lists(hostile_values, min_size=1, max_size=3),
            min_size=1,
            max_size=3,
        )
    )
    return {**start, **changed}


@settings(
    max_examples=3,
    deadline=None,
    # An example is a request through every door for every role: shrinking one would take
    # minutes, and _check's message names the request that failed.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    # The site is built once for the test, and _check rolls back each request's writes, so
    # every example meets it as it was built.
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_no_page_fails_open_on_hostile_parameters(site, clients, data):
    vocabulary = sorted({name for door in site if door.method == "GET" for name in door.names})
    for role, client in clients.items():
        for door in site:
            path = data.draw(st.sampled_from(door.paths))
            _check(client, role, door, path, _hostile_params(door, vocabulary, data))
