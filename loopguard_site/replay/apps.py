from django.apps import AppConfig


class ReplayConfig(AppConfig):
    name = "loopguard_site.replay"
