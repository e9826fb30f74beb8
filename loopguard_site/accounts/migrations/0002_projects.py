"""Projects and memberships. Existing rows move into the project "default",
and every existing user becomes its admin, so that what worked before the
projects still works; API tokens belong to it too."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from loopguard_site.accounts.constants import DEFAULT_PROJECT


def default_project_fill(apps, schema_editor):
    Project = apps.get_model("accounts", "Project")
    Membership = apps.get_model("accounts", "Membership")
    ApiToken = apps.get_model("accounts", "ApiToken")
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    project, _ = Project.objects.get_or_create(name=DEFAULT_PROJECT)
    Membership.objects.bulk_create(
        [Membership(user_id=pk, project=project, role="admin") for pk in User.objects.values_list("pk", flat=True)],
        ignore_conflicts=True,
    )
    ApiToken.objects.update(project=project)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Project",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100, unique=True)),
                ("created", models.DateTimeField(auto_now_add=True)),
            ],
            options={"ordering": ["name"]},
        ),
        migrations.CreateModel(
            name="Membership",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "role",
                    models.CharField(
                        choices=[("viewer", "Viewer"), ("reviewer", "Reviewer"), ("admin", "Admin")], max_length=16
                    ),
                ),
                (
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="memberships", to="accounts.project"
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="memberships",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["project", "user"],
                "constraints": [
                    models.UniqueConstraint(fields=("user", "project"), name="membership_one_per_user_project")
                ],
            },
        ),
        migrations.AddField(
            model_name="apitoken",
            name="project",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.CASCADE, related_name="api_tokens", to="accounts.project"
            ),
        ),
        migrations.RunPython(default_project_fill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="apitoken",
            name="project",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="api_tokens", to="accounts.project"
            ),
        ),
    ]
