from django.apps import AppConfig


class OverviewConfig(AppConfig):
    name = "loopguard_site.overview"
    label = "overview"
    verbose_name = "Overview"
