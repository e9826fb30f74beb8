"""Settings from the environment, both modes: each case imports the settings
in a fresh interpreter with exactly the given environment."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]

SHOW_SETTINGS = """
import json
from loopguard_site import settings as s
names = ["DEBUG", "ALLOWED_HOSTS", "DATABASES", "CHANNEL_LAYERS", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND",
         "LOOPGUARD_EMBEDDED", "LOOPGUARD_UPLOAD_MAX_BYTES", "DATA_UPLOAD_MAX_MEMORY_SIZE", "SECRET_KEY", "DATA_DIR",
         "CSRF_TRUSTED_ORIGINS", "LOOPGUARD_EMBEDDED_WORKER_THREADS"]
print(json.dumps({name: getattr(s, name) for name in names}, default=str))
"""

SQLITE_OPTIONS = {
    "timeout": 30,
    "transaction_mode": "IMMEDIATE",
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}


def load_settings(data_dir: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {"PATH": os.environ["PATH"], "LOOPGUARD_DATA_DIR": str(data_dir), **env}
    return subprocess.run(
        [sys.executable, "-c", SHOW_SETTINGS], cwd=REPO_ROOT, env=environ, capture_output=True, text=True, timeout=60
    )


def settings_for(data_dir: Path, **env: str) -> dict:
    result = load_settings(data_dir, **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_it_defaults_to_the_embedded_mode(tmp_path):
    s = settings_for(tmp_path)

    assert s["LOOPGUARD_EMBEDDED"] is True
    assert s["DATA_DIR"] == str(tmp_path)
    assert s["DATABASES"] == {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": f"{tmp_path}/loopguard.sqlite3",
            "OPTIONS": SQLITE_OPTIONS,
        }
    }
    layer = "loopguard_site.channel_layers.ThreadSafeInMemoryChannelLayer"
    assert s["CHANNEL_LAYERS"] == {"default": {"BACKEND": layer}}
    assert s["CELERY_BROKER_URL"] == "memory://localhost/"
    assert s["CELERY_RESULT_BACKEND"] == "cache+memory://"
    assert s["DEBUG"] is True
    assert s["ALLOWED_HOSTS"] == ["127.0.0.1", "localhost", "[::1]"]
    assert s["CSRF_TRUSTED_ORIGINS"] == []
    assert s["LOOPGUARD_UPLOAD_MAX_BYTES"] == s["DATA_UPLOAD_MAX_MEMORY_SIZE"] == 50 * 1024 * 1024
    assert s["LOOPGUARD_EMBEDDED_WORKER_THREADS"] == 2


def test_it_uses_postgresql_and_redis_in_the_full_mode(tmp_path):
    s = settings_for(
        tmp_path,
        DATABASE_URL="postgres://lg:p%40ss@db.internal:6543/lgdb?sslmode=require",
        REDIS_URL="redis://cache.internal:6380/2",
        DEBUG="false",
        SECRET_KEY="production-key",
        ALLOWED_HOSTS="lab.example.org, lab2.example.org",
        CSRF_TRUSTED_ORIGINS="https://lab.example.org",
        LOOPGUARD_UPLOAD_MAX_MB="5",
    )

    assert s["LOOPGUARD_EMBEDDED"] is False
    assert s["DATABASES"] == {
        "default": {
            "ENGINE": "loopguard_site.postgresql",
            "NAME": "lgdb",
            "USER": "lg",
            "PASSWORD": "p@ss",
            "HOST": "db.internal",
            "PORT": "6543",
            "OPTIONS": {"sslmode": "require"},
            "CONN_HEALTH_CHECKS": True,
        }
    }
    assert s["CHANNEL_LAYERS"] == {
        "default": {
            "BACKEND": "loopguard_site.channel_layers.PipelinedPubSubChannelLayer",
            # the database number in the pub/sub channels' names: a lab on database 3 hears none of these
            "CONFIG": {"hosts": [{"address": "redis://cache.internal:6380/2"}], "prefix": "asgi.db2"},
        }
    }
    assert s["CELERY_BROKER_URL"] == s["CELERY_RESULT_BACKEND"] == "redis://cache.internal:6380/2"
    assert s["DEBUG"] is False
    assert s["SECRET_KEY"] == "production-key"
    assert s["ALLOWED_HOSTS"] == ["lab.example.org", "lab2.example.org"]
    assert s["CSRF_TRUSTED_ORIGINS"] == ["https://lab.example.org"]
    assert s["LOOPGUARD_UPLOAD_MAX_BYTES"] == 5 * 1024 * 1024
    assert not (tmp_path / "secret_key").exists()


def test_it_keeps_the_generated_development_secret_key(tmp_path):
    first = settings_for(tmp_path)["SECRET_KEY"]
    second = settings_for(tmp_path)["SECRET_KEY"]

    assert first == second
    assert len(first) == 50
    assert (tmp_path / "secret_key").read_text() == first
    assert stat.S_IMODE((tmp_path / "secret_key").stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DEBUG": "maybe"}, "DEBUG='maybe' is not a boolean"),
        ({"DEBUG": "false"}, "SECRET_KEY is required when DEBUG is false"),
        ({"LOOPGUARD_UPLOAD_MAX_MB": "ten"}, "LOOPGUARD_UPLOAD_MAX_MB='ten' is not a whole number"),
        ({"LOOPGUARD_UPLOAD_MAX_MB": "0"}, "LOOPGUARD_UPLOAD_MAX_MB='0' must be at least 1"),
        ({"LOOPGUARD_EMBEDDED_WORKER_THREADS": "-2"}, "LOOPGUARD_EMBEDDED_WORKER_THREADS='-2' must be at least 1"),
        (
            {"DATABASE_URL": "mysql://db/lg"},
            "DATABASE_URL='mysql://db/lg': the scheme must be postgres:// or sqlite://",
        ),
        ({"DATABASE_URL": "postgres://db:port/lg"}, "DATABASE_URL='postgres://db:port/lg': the port is not a number"),
        ({"DATABASE_URL": "postgres://db:5432/"}, "DATABASE_URL='postgres://db:5432/': name the database"),
        ({"DATABASE_URL": "sqlite://lg.sqlite3"}, "DATABASE_URL='sqlite://lg.sqlite3': a SQLite URL is sqlite:////"),
        ({"DATABASE_URL": "sqlite:///lg.sqlite3"}, "DATABASE_URL='sqlite:///lg.sqlite3': a SQLite URL is sqlite:////"),
        ({"REDIS_URL": "localhost:6379"}, "REDIS_URL='localhost:6379': use redis://host:port/db"),
        ({"LOOPGUARD_RAW_STORAGE": "disk"}, "LOOPGUARD_RAW_STORAGE='disk': use db, file or s3"),
        ({"LOOPGUARD_RAW_STORAGE": "s3"}, "LOOPGUARD_RAW_STORAGE=s3 needs LOOPGUARD_S3_BUCKET"),
        ({"LOOPGUARD_RETENTION_DAYS": "-1"}, "LOOPGUARD_RETENTION_DAYS='-1' must be at least 0"),
    ],
)
def test_it_refuses_a_bad_value_naming_the_variable(tmp_path, env, message):
    result = load_settings(tmp_path, **env)

    assert result.returncode == 1
    assert f"django.core.exceptions.ImproperlyConfigured: {message}" in result.stderr


def test_it_reads_a_sqlite_url(tmp_path):
    s = settings_for(tmp_path, DATABASE_URL="sqlite:////var/lib/loop%20guard/lab.sqlite3")

    assert s["DATABASES"]["default"] == {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": "/var/lib/loop guard/lab.sqlite3",
        "OPTIONS": SQLITE_OPTIONS,
    }


def test_raw_uploads_go_to_a_file_directory_or_an_s3_bucket_as_configured(tmp_path):
    show = "from loopguard_site import settings as s; import json; print(json.dumps(s.STORAGES['raw_uploads']))"
    environ = {"PATH": os.environ["PATH"], "LOOPGUARD_DATA_DIR": str(tmp_path)}
    s3 = {
        "LOOPGUARD_RAW_STORAGE": "s3", "LOOPGUARD_S3_BUCKET": "b", "LOOPGUARD_S3_ENDPOINT_URL": "http://minio:9000",
        "LOOPGUARD_S3_REGION": "eu-west-1", "LOOPGUARD_S3_ACCESS_KEY_ID": "k", "LOOPGUARD_S3_SECRET_ACCESS_KEY": "s",
    }  # fmt: skip
    storages = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", show],
                cwd=REPO_ROOT,
                env={**environ, **env},
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            ).stdout
        )  # fmt: skip
        for env in ({}, {"LOOPGUARD_RAW_STORAGE": "file", "LOOPGUARD_RAW_DIR": "/srv/raw"}, s3)
    ]

    files = "django.core.files.storage.FileSystemStorage"
    assert storages == [
        {"BACKEND": files, "OPTIONS": {"location": f"{tmp_path}/raw-uploads"}},
        {"BACKEND": files, "OPTIONS": {"location": "/srv/raw"}},
        {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": "b", "endpoint_url": "http://minio:9000", "region_name": "eu-west-1",
                "access_key": "k", "secret_key": "s", "location": "raw-uploads", "file_overwrite": False,
            },
        },
    ]  # fmt: skip
