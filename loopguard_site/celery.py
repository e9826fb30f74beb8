"""The Celery app. Workers: `celery -A loopguard_site worker` (full mode) or
the embedded worker thread of `loopguard lab` (see `embedded_worker`).

Configuration comes from Django settings named CELERY_*; every installed
app's `tasks.py` is discovered.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "loopguard_site.settings")

app = Celery("loopguard_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
