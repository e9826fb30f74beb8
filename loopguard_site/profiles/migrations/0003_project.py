"""Stored profiles and tuning jobs belong to a project; existing ones move into "default"."""

from django.db import migrations

from loopguard_site.accounts.migration_ops import into_default_project


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_projects"),
        ("profiles", "0002_table_as_text"),
    ]

    operations = [
        *into_default_project("tuningjob", "profiles", "tuning_jobs"),
        *into_default_project("profileversion", "profiles", "profile_versions"),
    ]
