import pytest
from django.conf import settings
from rest_framework.test import APIClient

from gating.roles import Role
from tests.factories import UserFactory, token_for, valid_submission

# The tiers (README, "Tests"). `make check` leaves out what is marked slow: besides the tests
# marked so where they stand, every test of these folders (browsers, servers and the
# contract's fuzzing) and every test that needs Redis or checks a guarantee statistically.
SLOW_FOLDERS = ("browser", "contract", "reliability")
SLOW_MARKS = ("statistical", "redis")
# `make test` runs these one after another, in a pytest run of their own after the rest:
# the folders above start servers, browsers and worker processes that two at once would
# starve on two cores (a test of the request pace failed so), and the Redis tests start
# Celery workers. Why not pytest-xdist's xdist_group: under pytest 9 it no longer groups
# (xdist 3.8 renames a node id that pytest 9 no longer reads).
SERIAL_MARKS = ("redis",)


def pytest_collection_modifyitems(config, items):
    tests_root = config.rootpath / "tests"
    for item in items:
        folder = item.path.relative_to(tests_root).parts[0]
        if folder in SLOW_FOLDERS or any(item.get_closest_marker(m) for m in SLOW_MARKS):
            item.add_marker(pytest.mark.slow)
        if folder in SLOW_FOLDERS or any(item.get_closest_marker(m) for m in SERIAL_MARKS):
            item.add_marker(pytest.mark.serial)


@pytest.fixture
def user_in(db):
    """Make a user in a role: ``user_in(Role.LEAD)``."""
    return lambda role, **kw: UserFactory(role=role, **kw)


@pytest.fixture
def client_for(db):
    """An API client authenticated by bearer token as the given user."""

    def _client(user) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(user)}")
        return client

    return _client


@pytest.fixture
def reviewer(user_in):
    return user_in(Role.REVIEWER)


@pytest.fixture
def reviewer_api(reviewer, client_for) -> APIClient:
    """An API client authenticated as ``reviewer``."""
    return client_for(reviewer)


@pytest.fixture
def gateway(user_in):
    return user_in(Role.GATEWAY, username="gateway-1")


@pytest.fixture
def gateway_api(gateway, client_for) -> APIClient:
    return client_for(gateway)


@pytest.fixture
def admin_api(user_in, client_for) -> APIClient:
    return client_for(user_in(Role.ADMIN))


@pytest.fixture
def requires_postgres():
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("needs PostgreSQL (CI=true makes its absence an error instead)")


@pytest.fixture(autouse=True)
def _fresh_process_caches():
    """Tests roll their rows back; the per-process caches must not outlive them."""
    from gating.authentication import forget_tokens
    from gating.services import gate_caches_clear

    gate_caches_clear()
    forget_tokens()
    yield
    gate_caches_clear()
    forget_tokens()


@pytest.fixture
def held_outputs(gateway):
    """Ingest outputs that the gate holds for review: ``held_outputs(3, task_type="t")``.

    The task type is created in cold start (so every output is held) with no second reviews
    and no audits, unless the keyword arguments say otherwise.
    """
    from gating import services
    from tests.factories import TaskTypeFactory

    def _held(count=1, *, task_type="held", model="model-a", **task_type_fields):
        fields = {"reviewed_count": 0, "double_review_rate": 0.0, **task_type_fields}
        TaskTypeFactory(name=task_type, **fields)
        submissions = [valid_submission(task_type=task_type, model=model) for _ in range(count)]
        results = services.output_ingest_batch(source=gateway, submissions=submissions)
        return [r.output for r in results]

    return _held
