"""LoopGuard lab settings: the one place that reads the environment.

Every variable is listed, with its default, in README.md ("Configuration").
Two modes follow from REDIS_URL:

- embedded (REDIS_URL unset): SQLite in the data directory, an in-memory
  channel layer, and Celery on kombu's in-process `memory://` broker, served
  by a real worker thread that `loopguard lab` starts;
- full (REDIS_URL set): Redis as Celery broker, result backend and channel
  layer, workers as separate `celery -A loopguard_site worker` processes,
  usually with DATABASE_URL pointing at PostgreSQL.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from redis.connection import parse_url

from .env import database_from_url, env_bool, env_int, env_list, env_str, secret_key_from_file, sqlite_database

BASE_DIR = Path(__file__).resolve().parent.parent
# A checkout keeps templates/, static/ and fixtures/demo/ at its top level; a
# wheel carries them inside the package (setup.py).
IN_CHECKOUT = (BASE_DIR / "manage.py").is_file()
ASSETS_DIR = BASE_DIR if IN_CHECKOUT else Path(__file__).resolve().parent

DATA_DIR = (
    Path(env_str("LOOPGUARD_DATA_DIR", str(BASE_DIR / ".data" if IN_CHECKOUT else Path.home() / ".loopguard")))
    .expanduser()
    .resolve()
)
DATA_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("DEBUG", True)

SECRET_KEY = env_str("SECRET_KEY")
if SECRET_KEY is None:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY is required when DEBUG is false (production)")
    SECRET_KEY = secret_key_from_file(DATA_DIR / "secret_key")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# HTTPS (production behind TLS): off by default so the local lab works over
# plain HTTP; `manage.py check --deploy` passes once they are set (README).
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", False)
if env_bool("SECURE_PROXY_SSL", False):  # a TLS-terminating proxy sets X-Forwarded-Proto
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# PostgreSQL connections a lab, worker or CLI process holds at most (a
# thread that needs one more waits up to DB_WAIT seconds, then 503):
# processes x this must stay under the server's max_connections.
LOOPGUARD_DB_CONNECTIONS = env_int("LOOPGUARD_DB_CONNECTIONS", 20, minimum=1)
LOOPGUARD_DB_WAIT_SECONDS = env_int("LOOPGUARD_DB_WAIT_SECONDS", 30, minimum=1)

DATABASE_URL = env_str("DATABASE_URL")
DATABASES = {
    "default": database_from_url(DATABASE_URL) if DATABASE_URL else sqlite_database(DATA_DIR / "loopguard.sqlite3"),
}

REDIS_URL = env_str("REDIS_URL")
LOOPGUARD_EMBEDDED = REDIS_URL is None
if REDIS_URL is not None and not REDIS_URL.startswith(("redis://", "rediss://", "unix://")):
    raise ImproperlyConfigured(f"REDIS_URL={REDIS_URL!r}: use redis://host:port/db")

# Uploads (import): the largest transcript file or request body accepted.
LOOPGUARD_UPLOAD_MAX_BYTES = env_int("LOOPGUARD_UPLOAD_MAX_MB", 50, minimum=1) * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = LOOPGUARD_UPLOAD_MAX_BYTES
# Request bodies, judged by the lab's server on their headers before any of
# the body is read (loopguard_site/daphne_limits.py): without credentials
# (no Authorization header, no session cookie) at most ANONYMOUS_BODY_KB;
# with them, four uploads' worth (a zip may expand to that much, and several
# files may go in one form). A reverse proxy in front should have its own
# limit at least this high (README, "Deployment").
LOOPGUARD_ANONYMOUS_BODY_BYTES = env_int("LOOPGUARD_ANONYMOUS_BODY_KB", 64, minimum=1) * 1024
LOOPGUARD_REQUEST_MAX_BYTES = 4 * LOOPGUARD_UPLOAD_MAX_BYTES + 1024 * 1024
# a file past the limit is dropped as it streams in, not spooled whole to disk
FILE_UPLOAD_HANDLERS = [
    "loopguard_site.transcripts.upload_handlers.UploadLimitHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

# Retention: `loopguard prune` without --older-than deletes the sessions
# created more than this many days ago (0: off, it prunes only when told how old).
LOOPGUARD_RETENTION_DAYS = env_int("LOOPGUARD_RETENTION_DAYS", 0, minimum=0)

# Raw uploads (each uploaded file, byte for byte, for download): new ones are
# kept in the database (db), in files under LOOPGUARD_RAW_DIR (file) or in an
# S3-compatible bucket (s3, django-storages: `pip install loopguard[s3]`).
# Rows kept elsewhere stay readable: `loopguard move-raw-uploads` moves them.
LOOPGUARD_RAW_STORAGE = env_str("LOOPGUARD_RAW_STORAGE", "db")
if LOOPGUARD_RAW_STORAGE not in ("db", "file", "s3"):
    raise ImproperlyConfigured(f"LOOPGUARD_RAW_STORAGE={LOOPGUARD_RAW_STORAGE!r}: use db, file or s3")
if LOOPGUARD_RAW_STORAGE == "s3":
    if importlib.util.find_spec("storages") is None:
        raise ImproperlyConfigured("LOOPGUARD_RAW_STORAGE=s3 needs django-storages: pip install 'loopguard[s3]'")
    if env_str("LOOPGUARD_S3_BUCKET") is None:
        raise ImproperlyConfigured("LOOPGUARD_RAW_STORAGE=s3 needs LOOPGUARD_S3_BUCKET")
    RAW_UPLOAD_STORAGE = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env_str("LOOPGUARD_S3_BUCKET"),
            "endpoint_url": env_str("LOOPGUARD_S3_ENDPOINT_URL"),  # unset: AWS itself
            "region_name": env_str("LOOPGUARD_S3_REGION"),
            # unset: boto3's own chain (AWS_ACCESS_KEY_ID..., ~/.aws, an instance role)
            "access_key": env_str("LOOPGUARD_S3_ACCESS_KEY_ID"),
            "secret_key": env_str("LOOPGUARD_S3_SECRET_ACCESS_KEY"),
            "location": env_str("LOOPGUARD_S3_PREFIX", "raw-uploads"),
            "file_overwrite": False,
        },
    }
else:  # also where `db` mode reads rows an earlier `file` mode stored
    RAW_UPLOAD_STORAGE = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": env_str("LOOPGUARD_RAW_DIR", str(DATA_DIR / "raw-uploads"))},
    }
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "raw_uploads": RAW_UPLOAD_STORAGE,
}

# Limits: events a session may hold (import and live ingest), the largest
# WebSocket message, and authenticated API calls per token per UTC day (past
# it: 429 with Retry-After, accounts.quota).
LOOPGUARD_MAX_EVENTS = env_int("LOOPGUARD_MAX_EVENTS", 1_000_000, minimum=1)
# Sessions of at least this many events keep a stored layout: their page reads windows of it.
LOOPGUARD_LAYOUT_MIN_EVENTS = env_int("LOOPGUARD_LAYOUT_MIN_EVENTS", 2_000, minimum=1)
LOOPGUARD_WS_MAX_MESSAGE_BYTES = env_int("LOOPGUARD_WS_MAX_MESSAGE_KB", 1024, minimum=1) * 1024
# The deepest nesting of arrays and objects any JSON the lab reads may have
# (import, live ingest, the API): refused before anything recursive walks it.
LOOPGUARD_MAX_JSON_DEPTH = env_int("LOOPGUARD_MAX_JSON_DEPTH", 64, minimum=2)
LOOPGUARD_TOKEN_DAILY_QUOTA = env_int("LOOPGUARD_TOKEN_DAILY_QUOTA", 100_000, minimum=1)

# Login throttling (accounts.login_throttle): failed sign-ins allowed per
# username and per client address before both are refused for LOCK seconds.
LOOPGUARD_LOGIN_FAILURES_PER_ACCOUNT = env_int("LOOPGUARD_LOGIN_FAILURES_PER_ACCOUNT", 5, minimum=1)
LOOPGUARD_LOGIN_FAILURES_PER_ADDRESS = env_int("LOOPGUARD_LOGIN_FAILURES_PER_ADDRESS", 20, minimum=1)
LOOPGUARD_LOGIN_LOCK_SECONDS = env_int("LOOPGUARD_LOGIN_LOCK_SECONDS", 900, minimum=1)

# Crashed jobs finish. A task taken by a worker that died (SIGKILL, a lost
# machine) goes back to the queue once unacknowledged for VISIBILITY seconds
# (full mode; a running task is acknowledged when it ends). A replay job with
# no run started or finished for STALE seconds, or a tuning job with no
# progress for as long (the broker restarted without persistence and lost its
# tasks; a worker died), is re-queued by the lab's sweep.
LOOPGUARD_JOB_VISIBILITY_SECONDS = env_int("LOOPGUARD_JOB_VISIBILITY_SECONDS", 300, minimum=1)
LOOPGUARD_JOB_STALE_SECONDS = env_int("LOOPGUARD_JOB_STALE_SECONDS", 600, minimum=1)

# Worker threads of the embedded Celery worker (`loopguard lab` without REDIS_URL).
LOOPGUARD_EMBEDDED_WORKER_THREADS = env_int("LOOPGUARD_EMBEDDED_WORKER_THREADS", 2, minimum=1)

# Live sessions: no event for this long marks one `stalled` (seed 003's health
# check); the lab process looks for such sessions every LIVE_SWEEP seconds.
LOOPGUARD_LIVE_STALL_SECONDS = env_int("LOOPGUARD_LIVE_STALL_SECONDS", 60, minimum=1)
LOOPGUARD_LIVE_SWEEP_SECONDS = env_int("LOOPGUARD_LIVE_SWEEP_SECONDS", 10, minimum=1)


# The proxies: the OpenAI-compatible upstream of POST /v1/chat/completions and
# /v1/responses (an OpenAI-style base URL, e.g. https://api.openai.com/v1), the
# Anthropic one of /v1/messages (https://api.anthropic.com/v1), the keys they
# are sent, and the finish (stop) reason of an answer cut for a loop.
def _upstream_url(name: str) -> str | None:
    url = env_str(name)
    if url is not None and not url.startswith(("http://", "https://")):
        raise ImproperlyConfigured(f"{name}={url!r}: use http(s)://host/v1")
    return url


LOOPGUARD_UPSTREAM_URL = _upstream_url("LOOPGUARD_UPSTREAM_URL")
LOOPGUARD_ANTHROPIC_UPSTREAM_URL = _upstream_url("LOOPGUARD_ANTHROPIC_UPSTREAM_URL")
LOOPGUARD_UPSTREAM_KEY = env_str("LOOPGUARD_UPSTREAM_KEY")
LOOPGUARD_ANTHROPIC_UPSTREAM_KEY = env_str("LOOPGUARD_ANTHROPIC_UPSTREAM_KEY")
LOOPGUARD_PROXY_FINISH_REASON = env_str("LOOPGUARD_PROXY_FINISH_REASON", "loop_detected")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "loopguard_site.apps.LoopGuardSiteConfig",
    "loopguard_site.accounts",
    "loopguard_site.health",
    "loopguard_site.transcripts",
    "loopguard_site.replay",
    "loopguard_site.live",
    "loopguard_site.proxy",
    "loopguard_site.otlp",
    "loopguard_site.review",
    "loopguard_site.profiles",
    "loopguard_site.overview",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "loopguard_site.accounts.csp.ContentSecurityPolicyMiddleware",
    "loopguard_site.faults.UnstorableInputMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "loopguard_site.faults.DatabaseUnavailableMiddleware",
    "loopguard_site.faults.RedisUnavailableMiddleware",
]

ROOT_URLCONF = "loopguard_site.urls"
ASGI_APPLICATION = "loopguard_site.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [ASSETS_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
            "builtins": ["loopguard_site.templatetags.untrusted_text"],  # escape_controls
        },
    },
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
FORMAT_MODULE_PATH = ["loopguard_site.formats"]  # one date/time format everywhere: 2026-11-24 23:59
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "overview:overview"
LOGOUT_REDIRECT_URL = "accounts:login"

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STATICFILES_DIRS = [ASSETS_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "loopguard_site.staticfinders.PlotlyFinder",
]
# plotly.min.js ships inside the plotly Python package; served as static/plotly/plotly.min.js.
PLOTLY_JS_DIR = Path(importlib.util.find_spec("plotly").origin).parent / "package_data"

if LOOPGUARD_EMBEDDED:
    CHANNEL_LAYERS = {"default": {"BACKEND": "loopguard_site.channel_layers.ThreadSafeInMemoryChannelLayer"}}
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}  # one process
    CELERY_BROKER_URL = "memory://localhost/"
    CELERY_RESULT_BACKEND = "cache+memory://"
    # The memory transport is polled: poll often so a queued task starts at once.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"polling_interval": 0.05}
else:
    # The pub/sub layer: a group send is one PUBLISH, and each process reads
    # its subscriptions as a stream. The core layer (channels_redis.core) was
    # measured dropping viewers' messages under live load (its group sends
    # find a process's one inbox of 100 messages full) and running out of
    # pooled connections (bench/live_load.py, BENCHMARKS.md). What the pub/sub
    # layer gives up, buffering messages while a process is cut off from
    # Redis, the lab does not rely on: the data is in the database, and a
    # socket that connects again gets a snapshot. Ours adds group_send_many
    # (channel_layers.py).
    # Redis keeps keys per database number, not pub/sub: a PUBLISH reaches
    # the subscribers of every database. Two labs on one Redis server heard
    # each other's groups (one's takeover of its session 39 closed the other's
    # producer of session 39 with 4409), so the names carry the database.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "loopguard_site.channel_layers.PipelinedPubSubChannelLayer",
            "CONFIG": {"hosts": [{"address": REDIS_URL}], "prefix": f"loopguard.db{parse_url(REDIS_URL).get('db', 0)}"},
        }
    }
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    # A worker looks for tasks unacknowledged past the visibility timeout when
    # it starts, then every unacked_restore_interval (10 s) times the throttle:
    # kombu's default throttle, 10, let a killed worker's task wait 100 s more
    # once its restarted worker was up before the timeout had passed.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": LOOPGUARD_JOB_VISIBILITY_SECONDS,
        "unacked_restore_throttle": 1,
    }

# Every 500 is logged with its traceback with DEBUG off too (Django's
# default then only mails ADMINS), to stderr, where the lab's output and a
# service manager's journal collect it; with DEBUG on, Django's console does.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"debug_off": {"()": "django.utils.log.RequireDebugFalse"}},
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["debug_off"]}},
    "loggers": {"django.request": {"handlers": ["stderr"], "level": "ERROR"}},
}

CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
