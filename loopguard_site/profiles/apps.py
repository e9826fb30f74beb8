from django.apps import AppConfig


class ProfilesConfig(AppConfig):
    name = "loopguard_site.profiles"
