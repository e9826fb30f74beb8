"""Sessions belong to a project; existing ones move into "default"."""

from django.db import migrations

from loopguard_site.accounts.migration_ops import into_default_project


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_projects"),
        ("transcripts", "0002_tags"),
    ]

    operations = [
        *into_default_project("session", "transcripts", "sessions"),
    ]
