"""The migrations that add projects keep what existed working: every row
moves into the project "default", every user becomes its admin."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [
    ("accounts", "0001_initial"),
    ("transcripts", "0002_tags"),
    ("replay", "0002_run_claimed_by"),
    ("profiles", "0002_table_as_text"),
]


@pytest.mark.django_db(transaction=True)
def test_existing_rows_move_into_default_and_users_become_its_admins():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    user = old.get_model("auth", "User").objects.create(username="old-timer")
    old.get_model("auth", "User").objects.create(username="another")
    session = old.get_model("transcripts", "Session").objects.create(title="old", source_format="events", uploader=user)
    job = old.get_model("replay", "ReplayJob").objects.create(created_by=user)
    tuning = old.get_model("profiles", "TuningJob").objects.create(model_glob="*", base_profile="default")
    version = old.get_model("profiles", "ProfileVersion").objects.create(name="mine", version=1, table_json="{}")
    token = old.get_model("accounts", "ApiToken").objects.create(user=user, name="t", token_hash="h", prefix="lg_")

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    new = executor.loader.project_state(executor.loader.graph.leaf_nodes()).apps

    default = new.get_model("accounts", "Project").objects.get()
    assert default.name == "default"
    for model, pk in (
        ("transcripts.Session", session.pk),
        ("replay.ReplayJob", job.pk),
        ("profiles.TuningJob", tuning.pk),
        ("profiles.ProfileVersion", version.pk),
        ("accounts.ApiToken", token.pk),
    ):
        assert new.get_model(model).objects.get(pk=pk).project_id == default.pk, model
    memberships = new.get_model("accounts", "Membership").objects.order_by("user__username")
    assert list(memberships.values_list("user__username", "project__name", "role")) == [
        ("another", "default", "admin"),
        ("old-timer", "default", "admin"),
    ]
