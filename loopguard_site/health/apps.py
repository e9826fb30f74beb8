from django.apps import AppConfig


class HealthConfig(AppConfig):
    name = "loopguard_site.health"
