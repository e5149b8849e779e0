"""Production mode: every secret from the environment, HTTPS everywhere.

Passes ``python manage.py check --deploy`` with no warnings. A missing or empty SECRET_KEY,
DATABASE_URL or REDIS_URL stops the process at start rather than falling back.
"""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import LOGGING, REDIS_TRANSPORT_OPTIONS, env, log_format_from_env, postgres_database

SECRET_KEY = env.str("SECRET_KEY").strip()
if not SECRET_KEY:
    # An empty key passes Django's start-up and then fails every request, /healthz too.
    raise ImproperlyConfigured("Set the SECRET_KEY environment variable to a long random string.")
DEBUG = False
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS")
DATABASES = {"default": postgres_database(env.db("DATABASE_URL"))}
REDIS_URL = env.str("REDIS_URL")
CELERY_BROKER_URL = REDIS_URL
CELERY_BROKER_TRANSPORT_OPTIONS = REDIS_TRANSPORT_OPTIONS

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = False

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
# Health checks and Prometheus reach the workers directly, over the private network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# JSON lines, one object a line, for the log store; LOG_FORMAT=text for reading by eye.
LOG_FORMAT = log_format_from_env("json")
LOGGING["handlers"]["console"]["formatter"] = LOG_FORMAT
