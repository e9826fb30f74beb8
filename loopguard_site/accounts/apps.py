from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "loopguard_site.accounts"
