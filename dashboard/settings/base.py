"""Settings shared by every mode, read from the environment.

With no environment at all this is the demo mode: SQLite and a filesystem Celery
broker under ``var/``, so that the run command works on a machine with only Python.
Set ``DATABASE_URL`` and ``REDIS_URL`` to use PostgreSQL and Redis instead.
The demo mode does not pass ``check --deploy``; ``dashboard.settings.production`` does.
"""

import ipaddress
import logging
import secrets
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env")

# What the demo mode keeps on disk: its SQLite database, broker folder, secret key and demo
# logins. GATEHOUSE_VAR_DIR puts it elsewhere (a second demo, or a test of make run's).
VAR_DIR = Path(env.str("GATEHOUSE_VAR_DIR", default=str(BASE_DIR / "var")))


def _demo_secret_key() -> str:
    # A per-checkout random key, kept under var/, rather than a placeholder in the code.
    key_file = VAR_DIR / "secret_key"
    if not key_file.exists():
        VAR_DIR.mkdir(exist_ok=True)
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


def _share(name: str, default: float) -> float:
    """A share in [0, 1] from the environment: anything else stops the start, naming it."""
    try:
        value = env.float(name, default=default)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= 1.0:
        raise ImproperlyConfigured(f"{name} must be a number from 0 to 1, not {env.str(name)!r}.")
    return value


SECRET_KEY = env.str("SECRET_KEY", default="") or _demo_secret_key()
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "django_htmx",
    "dashboard",
    "gating",
    "learning",
]

MIDDLEWARE = [
    # First: the request's id is set before anything logs, and the access line is written last.
    "gating.request_log.RequestLogMiddleware",
    "gating.middleware.IngestMetricsMiddleware",
    "gating.middleware.RequestBodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "dashboard.urls"
WSGI_APPLICATION = "dashboard.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# How long a connection to PostgreSQL may take to open: libpq waits for ever by default, so a
# database host that stopped answering would hold every request (and /metrics) until TCP gave
# up, minutes later. Past it the request fails as any database fault does.
DATABASE_CONNECT_TIMEOUT_SECONDS = env.int("DATABASE_CONNECT_TIMEOUT_SECONDS", default=5)
if not 1 <= DATABASE_CONNECT_TIMEOUT_SECONDS <= 60:
    raise ImproperlyConfigured(
        "DATABASE_CONNECT_TIMEOUT_SECONDS must be between 1 and 60, "
        f"not {DATABASE_CONNECT_TIMEOUT_SECONDS}."
    )


def postgres_database(config: dict) -> dict:
    """A PostgreSQL entry of DATABASES as every mode runs it: connections kept CONN_MAX_AGE
    seconds and checked before reuse, and opened within DATABASE_CONNECT_TIMEOUT_SECONDS."""
    config.setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
    config["CONN_HEALTH_CHECKS"] = True
    config.setdefault("OPTIONS", {})["connect_timeout"] = DATABASE_CONNECT_TIMEOUT_SECONDS
    return config


_SQLITE_PATH = VAR_DIR / "gatehouse.sqlite3"
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{_SQLITE_PATH}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(exist_ok=True)
    # Web, worker and beat write concurrently: WAL plus IMMEDIATE transactions turn
    # "database is locked" errors into short waits.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
else:
    postgres_database(DATABASES["default"])

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
# Ours from static/, the apps' own, and plotly.js from the plotly package (as vendor/).
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "dashboard.staticfiles.VendorFinder",
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Serve files straight from the finders, so a fresh checkout needs no collectstatic.
# Production switches to hashed names, which collectstatic builds in the image.
WHITENOISE_USE_FINDERS = True

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"

# Gatehouse answers a request body over this size with 413 before parsing it.
MAX_REQUEST_BODY_BYTES = env.int("MAX_REQUEST_BODY_BYTES", default=2 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BODY_BYTES

# Per-process caches on the gate's hot path. A revoked token or a changed role is honoured
# by every process within TOKEN_CACHE_SECONDS; an admin's threshold or weight change, and
# new review counts, reach every process within GATE_CACHE_SECONDS.
TOKEN_CACHE_SECONDS = env.float("TOKEN_CACHE_SECONDS", default=10.0)
GATE_CACHE_SECONDS = env.float("GATE_CACHE_SECONDS", default=5.0)
# Score every output also with each other scorer its payload has the inputs for, for the
# calibration page's comparison (docs/scoring.md). Off only to measure what it costs.
SHADOW_SCORING = env.bool("SHADOW_SCORING", default=True)

# The review queue. A claim is a lease: it lapses unless the review page's heartbeat
# renews it, and a lapsed item goes to the next reviewer who asks.
REVIEW_LEASE_SECONDS = env.int("REVIEW_LEASE_SECONDS", default=600)
# A skipped item is not offered again to the reviewer who skipped it for this long.
REVIEW_SKIP_COOLDOWN_SECONDS = env.int("REVIEW_SKIP_COOLDOWN_SECONDS", default=600)
# An approval from the review page waits this long before it is sent, and can be undone
# until then (u); nothing is recorded in the meantime. 0 sends at once.
REVIEW_UNDO_SECONDS = env.int("REVIEW_UNDO_SECONDS", default=4)
if not 0 <= REVIEW_UNDO_SECONDS <= 30:
    raise ImproperlyConfigured(
        f"REVIEW_UNDO_SECONDS must be between 0 and 30, not {REVIEW_UNDO_SECONDS}."
    )
REVIEW_REJECT_REASONS = env.list(
    "REVIEW_REJECT_REASONS",
    default=["factual_error", "hallucination", "unsafe", "off_task", "formatting", "other"],
)
# The share of review capacity kept for audits (docs/review-queue.md): a claim takes the
# oldest open audit first while audits are under this share of the reviewer's claims of
# the last hour. Audits are the only evidence about what the gate delivered, and past
# this share held outputs go first, which would leave them behind any backlog.
REVIEW_AUDIT_SHARE = _share("REVIEW_AUDIT_SHARE", default=0.25)
# The share of audits that a lead judges again, unseen, once the audit is settled: the gold
# check of the label model's calibration on the calibration page (docs/learning.md). Drawn
# by a hash of the output's id, so it takes no turn of the simulator's random draws.
REVIEW_GOLD_SHARE = _share("REVIEW_GOLD_SHARE", default=0.05)
# A bulk decision over more outputs than this is refused: narrow the filter.
BULK_DECISION_LIMIT = env.int("BULK_DECISION_LIMIT", default=10_000)

# Webhooks. Private, loopback, link-local and metadata addresses are refused unless this is
# set, which only tests and closed networks should do.
WEBHOOK_ALLOW_PRIVATE_ADDRESSES = env.bool("WEBHOOK_ALLOW_PRIVATE_ADDRESSES", default=False)
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", default=10.0)
# Retries back off exponentially from this delay and stop WEBHOOK_RETRY_HOURS after the event.
WEBHOOK_RETRY_BASE_SECONDS = env.float("WEBHOOK_RETRY_BASE_SECONDS", default=30.0)
WEBHOOK_RETRY_HOURS = env.float("WEBHOOK_RETRY_HOURS", default=24.0)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "gating.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "gating.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Gatehouse API",
    "DESCRIPTION": "Confidence gate, review queue and learning for LLM outputs.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # 3.1 because the pydantic request models use JSON Schema nulls.
    "OAS_VERSION": "3.1.0",
    # Swagger UI from the installed sidecar package, never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # A rubric dimension's kind, beside the review item's: two choice sets of one field name.
    "ENUM_NAME_OVERRIDES": {
        "DimensionKindEnum": ["numeric", "categorical", "boolean"],
        "KindEnum": ["review", "audit", "second", "adjudication", "gold"],
    },
    # The default enum hook, then every operation's error statuses, added by rule.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "gating.api.schema.error_responses",
    ],
}

# Celery. Without REDIS_URL the broker is a folder under var/, which lets a real worker
# and beat run beside the web server on a bare machine.
REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
else:
    _BROKER_DIR = VAR_DIR / "broker"
    for _sub in ("queue", "processed", "control"):
        (_BROKER_DIR / _sub).mkdir(parents=True, exist_ok=True)
    # A host named, though the folder transport uses none: kombu warns of its absence.
    CELERY_BROKER_URL = "filesystem://localhost/"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_BROKER_DIR / "queue"),
        "data_folder_out": str(_BROKER_DIR / "queue"),
        "processed_folder": str(_BROKER_DIR / "processed"),
        # Its exchange tables, which kombu would otherwise write to ./control.
        "control_folder": str(_BROKER_DIR / "control"),
        "store_processed": False,
    }
# Requests never publish: they store tasks in the outbox table, and the relay
# (manage.py outbox_relay) publishes them. These timeouts keep the relay and the workers
# from hanging on a broker that does not answer (docs/reliability.md).
OUTBOX_POLL_SECONDS = env.float("OUTBOX_POLL_SECONDS", default=0.5)
OUTBOX_MAX_BACKOFF_SECONDS = env.float("OUTBOX_MAX_BACKOFF_SECONDS", default=5.0)
REDIS_TRANSPORT_OPTIONS = {"socket_connect_timeout": 1, "socket_timeout": 2}
if REDIS_URL:
    CELERY_BROKER_TRANSPORT_OPTIONS = REDIS_TRANSPORT_OPTIONS
CELERY_BROKER_CONNECTION_TIMEOUT = 1.0
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = TIME_ZONE
# The schedule lives in django-celery-beat's tables, where admins see and change it; its
# default is written in dashboard/schedule.py and seeded from there after every migrate.
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"

# Learning cycles (docs/learning.md).
LEARNING_LOOKBACK_DAYS = env.int("LEARNING_LOOKBACK_DAYS", default=30)
# A cycle still "running" this long after it started, with no transaction holding its
# record, lost its worker: beat's cycles_resume (every minute) queues it again.
CYCLE_RESUME_AFTER_SECONDS = env.float("CYCLE_RESUME_AFTER_SECONDS", default=120.0)
LEARNING_MIN_VERDICTS = env.int("LEARNING_MIN_VERDICTS", default=50)
LEARNING_MAX_WEIGHT_STEP = env.float("LEARNING_MAX_WEIGHT_STEP", default=0.1)
LEARNING_WEIGHT_FLOOR = env.float("LEARNING_WEIGHT_FLOOR", default=0.05)
# Bootstrap refits of the label model per thresholds run, whose spread widens the bound: at
# least 2 / delta - 1 (39 at delta = 0.05) for the label model's share of delta. 79 rather
# than 39: the bound then takes the second largest replicate, not the largest, and one
# outlying refit no longer decides the run (docs/learning.md, "Replicates").
LEARNING_LABEL_REPLICATES = env.int("LEARNING_LABEL_REPLICATES", default=79)
# The share of judged outputs that fits the validator weights; the rest certify the
# thresholds, so that a threshold is certified on outputs its score was not fitted to.
# 0 fits and certifies on every output, the policy the closed-loop claims are proven on
# (docs/learning.md, "Fitting and certifying", has what a split costs).
LEARNING_FIT_SHARE = _share("LEARNING_FIT_SHARE", default=0.0)
if LEARNING_FIT_SHARE == 1:
    raise ImproperlyConfigured("LEARNING_FIT_SHARE must be below 1: the rest certifies.")
LEARNING_RELIABILITY_PRIOR = env.float("LEARNING_RELIABILITY_PRIOR", default=0.7)
LEARNING_RELIABILITY_PRIOR_STRENGTH = env.float("LEARNING_RELIABILITY_PRIOR_STRENGTH", default=20.0)
# Where alert links point: the site's own address, for emails and webhooks.
SITE_URL = env.str("SITE_URL", default="http://127.0.0.1:8000")
# Alert emails to leads. EMAIL_URL as in django-environ, e.g. smtp+tls://user:pw@host:587;
# the default prints them to the worker's log.
vars().update(env.email_url("EMAIL_URL", default="consolemail://"))
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="gatehouse@localhost")


def _networks(name: str, default: list[str]) -> tuple:
    """CIDRs from the environment, comma-separated; a malformed one stops the start, named.
    Empty is unset (as compose passes an unset variable), not "no network"."""
    values = [v for v in env.str(name, default="").split(",") if v.strip()] or default
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(value.strip()))
        except ValueError:
            message = f"{name}: {value!r} is not a network such as 10.0.0.0/8."
            raise ImproperlyConfigured(message) from None
    return tuple(networks)


# Prometheus (docs/integrations.md). /metrics answers a request bearing METRICS_TOKEN, or
# one from an address in METRICS_ALLOWED_NETWORKS (loopback only, when neither is set).
# Behind a proxy the address is the proxy's: use the token there.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="").strip()
if METRICS_TOKEN and len(METRICS_TOKEN) < 16:
    raise ImproperlyConfigured("METRICS_TOKEN must be at least 16 characters long.")
METRICS_ALLOWED_NETWORKS = _networks(
    "METRICS_ALLOWED_NETWORKS", default=[] if METRICS_TOKEN else ["127.0.0.0/8", "::1/128"]
)
# The scrape's database reads give up after this long (PostgreSQL), and the scrape answers
# without them: Prometheus's own timeout is 10 s by default.
METRICS_DB_TIMEOUT_SECONDS = env.float("METRICS_DB_TIMEOUT_SECONDS", default=2.0)
if not 0.1 <= METRICS_DB_TIMEOUT_SECONDS <= 30:
    raise ImproperlyConfigured(
        f"METRICS_DB_TIMEOUT_SECONDS must be between 0.1 and 30, not {METRICS_DB_TIMEOUT_SECONDS}."
    )

# Logs: readable text here, JSON lines in production (LOG_FORMAT). Every line carries the
# request's id; gating.request_log writes one access line per request, never a body.
LOG_FORMATS = ("text", "json")


def log_format_from_env(default: str) -> str:
    """LOG_FORMAT, one of LOG_FORMATS; production's default differs from this mode's."""
    value = env.str("LOG_FORMAT", default=default)
    if value not in LOG_FORMATS:
        raise ImproperlyConfigured(f"LOG_FORMAT must be text or json, not {value!r}.")
    return value


LOG_FORMAT = log_format_from_env("text")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "gating.request_log.RequestIdFilter"}},
    "formatters": {
        "text": {
            "()": "gating.request_log.TextFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s",
        },
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(levelname)s %(name)s %(request_id)s %(message)s",
            # An ISO 8601 time in UTC, which log stores parse without a format of their own.
            "timestamp": "time",
            "rename_fields": {"levelname": "level", "name": "logger"},
        },
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # A 403 or 404 is an answer, not a fault: Django logs each with its traceback at WARNING.
    # Faults (500) are still logged, with theirs; the access log has every request's status.
    "loggers": {"django.request": {"level": "ERROR"}},
}
# Celery's worker and beat replace the root logger's handlers with their own text lines,
# unless told not to: in JSON mode they keep LOGGING's, so that every line a deployment
# writes parses (their --loglevel still sets the level). In text mode they keep their own.
CELERY_WORKER_HIJACK_ROOT_LOGGER = LOG_FORMAT != "json"
if LOG_FORMAT == "json":
    # Python's warnings (a library's deprecation, Celery's warning against running as root)
    # as JSON lines too, from the py.warnings logger, rather than as raw text on stderr.
    logging.captureWarnings(True)
