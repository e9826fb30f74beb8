from django.apps import AppConfig


class LiveConfig(AppConfig):
    name = "loopguard_site.live"
