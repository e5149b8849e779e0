FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    DJANGO_SETTINGS_MODULE=dashboard.settings.production

WORKDIR /app
# The runtime packages exactly as locked (`make lock`), in a layer of their own that is rebuilt
# only when the lock changes; then Gatehouse itself, whose dependencies that layer already holds.
COPY requirements.lock ./
RUN pip install --require-hashes -r requirements.lock
COPY pyproject.toml README.md ./
COPY dashboard ./dashboard
COPY gating ./gating
COPY learning ./learning
COPY simulator ./simulator
RUN pip install --no-deps .
COPY . .
# collectstatic imports the settings, which insist on these; the values are never used.
RUN SECRET_KEY=build ALLOWED_HOSTS=build DATABASE_URL=sqlite:////tmp/build.sqlite3 \
    REDIS_URL=redis://build:6379/0 python manage.py collectstatic --noinput \
 && useradd --system --uid 1000 gatehouse && mkdir -p /app/var && chown gatehouse /app/var
USER gatehouse
EXPOSE 8000
CMD ["gunicorn", "dashboard.wsgi", "-c", "dashboard/gunicorn.conf.py", "--bind", "0.0.0.0:8000", "--workers", "4", "--no-control-socket"]
