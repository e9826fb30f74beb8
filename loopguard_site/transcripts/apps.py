from django.apps import AppConfig


class TranscriptsConfig(AppConfig):
    name = "loopguard_site.transcripts"

    def ready(self) -> None:
        from . import raw_uploads  # noqa: F401 - connects its post_delete receiver
