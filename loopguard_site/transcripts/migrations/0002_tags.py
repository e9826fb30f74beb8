# Tags move from a JSON list on Session to a Tag table, so sessions can be
# filtered by tag on SQLite as well as PostgreSQL.

from django.db import migrations, models


def copy_tags(apps, schema_editor):
    Session = apps.get_model("transcripts", "Session")
    Tag = apps.get_model("transcripts", "Tag")
    for session in Session.objects.exclude(tags=[]).only("id", "tags"):
        names = {str(name)[:50] for name in session.tags or [] if str(name).strip()}
        session.tag_set.set([Tag.objects.get_or_create(name=name)[0] for name in names])


class Migration(migrations.Migration):

    dependencies = [
        ("transcripts", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="Tag",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=50, unique=True)),
            ],
            options={"ordering": ["name"]},
        ),
        migrations.AddField(
            model_name="session",
            name="tag_set",
            field=models.ManyToManyField(blank=True, related_name="sessions", to="transcripts.tag"),
        ),
        migrations.RunPython(copy_tags, migrations.RunPython.noop),
        migrations.RemoveField(model_name="session", name="tags"),
        migrations.RenameField(model_name="session", old_name="tag_set", new_name="tags"),
    ]
