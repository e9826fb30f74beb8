"""What the migrations that add a `project` to an app's rows share: those
rows move into the project "default" (accounts 0002 creates it)."""

from __future__ import annotations

from django.db import migrations, models

from .constants import DEFAULT_PROJECT


def into_default_project(model_name: str, app_label: str, related_name: str) -> list:
    """Operations adding a non-null `project` to `app_label.model_name`:
    the column nullable, every row into "default", then not nullable."""

    def fill(apps, schema_editor):
        project, _ = apps.get_model("accounts", "Project").objects.get_or_create(name=DEFAULT_PROJECT)
        apps.get_model(app_label, model_name).objects.update(project=project)

    def field(null: bool) -> models.ForeignKey:
        return models.ForeignKey(null=null, on_delete=models.PROTECT, related_name=related_name, to="accounts.project")

    return [
        migrations.AddField(model_name=model_name, name="project", field=field(True)),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.AlterField(model_name=model_name, name="project", field=field(False)),
    ]
