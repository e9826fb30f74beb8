from django.apps import AppConfig


class ProxyConfig(AppConfig):
    name = "loopguard_site.proxy"
