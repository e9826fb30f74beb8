"""Replay jobs belong to their sessions' project; existing ones move into "default"."""

from django.db import migrations

from loopguard_site.accounts.migration_ops import into_default_project


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_projects"),
        ("replay", "0002_run_claimed_by"),
    ]

    operations = [
        *into_default_project("replayjob", "replay", "replay_jobs"),
    ]
