from django.apps import AppConfig


class ReplayConfig(AppConfig):
    name = "loopguard_site.replay"

    def ready(self) -> None:
        from loopguard_site.transcripts.signals import sessions_imported

        from .receivers import scan_imported

        sessions_imported.connect(scan_imported, dispatch_uid="replay.scan_imported")
