from django.apps import AppConfig


class ReplayConfig(AppConfig):
    name = "loopguard_site.replay"

    def ready(self) -> None:
        from django.db.models.signals import pre_delete

        from loopguard_site.transcripts.signals import sessions_imported

        from .models import ReplayRun
        from .receivers import run_deleting, scan_imported

        sessions_imported.connect(scan_imported, dispatch_uid="replay.scan_imported")
        pre_delete.connect(run_deleting, sender=ReplayRun, dispatch_uid="replay.run_deleting")
