from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "loopguard_site.review"

    def ready(self) -> None:
        # replay (a lower layer) reads reviewers' truth without importing this app
        from loopguard_site.replay.selectors import labelled_truths_reader_set

        from .selectors import session_truths

        labelled_truths_reader_set(session_truths)
