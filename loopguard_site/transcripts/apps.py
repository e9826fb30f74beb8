from django.apps import AppConfig


class TranscriptsConfig(AppConfig):
    name = "loopguard_site.transcripts"
