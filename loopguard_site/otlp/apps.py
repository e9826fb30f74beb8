from django.apps import AppConfig


class OtlpConfig(AppConfig):
    name = "loopguard_site.otlp"
