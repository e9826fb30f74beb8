import json

from django.db import migrations, models


def table_to_text(apps, schema_editor):
    ProfileVersion = apps.get_model("profiles", "ProfileVersion")
    for version in ProfileVersion.objects.all():
        version.table_json = json.dumps(version.table)
        version.save(update_fields=["table_json"])


class Migration(migrations.Migration):
    dependencies = [("profiles", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="profileversion",
            name="table_json",
            field=models.TextField(
                default="{}", help_text="the profile's table in a config file (models, description, detectors)"
            ),
            preserve_default=False,
        ),
        migrations.RunPython(table_to_text, migrations.RunPython.noop),
        migrations.RemoveField(model_name="profileversion", name="table"),
    ]
