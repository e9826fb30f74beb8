from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "loopguard_site.review"
