import logging
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings.base")

app = Celery("gatehouse")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def publish(task, *args) -> bool:
    """Queue ``task(*args)`` without waiting on the broker: False when it is unreachable.

    Callers keep the work somewhere it survives (an outbox row, a shell command to run),
    so that a request never waits for or fails on Celery.
    """
    try:
        task.apply_async(args, retry=False)
    except Exception:  # any broker or transport failure means the same here
        logging.getLogger(__name__).warning("Broker unreachable: %s not queued", task.name)
        return False
    return True
