from django.apps import AppConfig


class LoopGuardSiteConfig(AppConfig):
    name = "loopguard_site"
    verbose_name = "LoopGuard"

    def ready(self) -> None:
        # Makes our Celery app the current one, so `shared_task`s of every
        # app enqueue to its broker in web processes too.
        from . import celery  # noqa: F401
