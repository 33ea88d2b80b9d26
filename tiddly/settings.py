"""Django settings for Tiddly.

Everything that differs between machines comes from the environment through the typed readers in
``tiddly.env``. Unset ``DATABASE_URL`` means an embedded SQLite file; set it to a PostgreSQL URL for
production and multi-process deployments.
"""

from __future__ import annotations

import hashlib
import secrets
import tempfile
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from tiddly import __version__
from tiddly.env import env_bool, env_int, env_int_list, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

# Off unless asked for (DJANGO_DEBUG=1): Django's debug pages list every route and, for a
# request with an unknown Host, the settings — nothing a visitor of `make run` may see.
DEBUG = env_bool("DJANGO_DEBUG", False)
# Even then, an error page lists no settings (a foreign Host header would show them to anyone).
DEFAULT_EXCEPTION_REPORTER_FILTER = "tiddly.debug_pages.SettingsHidden"


def _secret_key() -> str:
    key = env_str("DJANGO_SECRET_KEY")
    if key:
        return key
    # Without one: a generated key kept beside the project (owner-only, ignored by git), so
    # sessions survive restarts on this machine without a secret ever being committed. Several
    # machines sharing a database must set the same DJANGO_SECRET_KEY instead.
    key_file = BASE_DIR / ".secret_key"
    try:
        if not key_file.exists():
            key_file.touch(mode=0o600)
            key_file.write_text(secrets.token_urlsafe(50))
        return key_file.read_text().strip()
    except OSError as exc:
        raise ImproperlyConfigured(
            f"Set DJANGO_SECRET_KEY: no key could be generated into {key_file} ({exc})."
        ) from None


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "tiddly.third_party_apps.OAuthApplicationsConfig",  # oauth2_provider, its admin section renamed
    "drf_spectacular_sidecar",
    "django_tasks",
    "tiddly.third_party_apps.BackgroundTasksConfig",  # django_tasks_db, its admin section renamed
    "tiddly",
    "content",
    "prompts",
    "mcp_bridge",
]

MIDDLEWARE = [
    "tiddly.middleware.ReleaseRequestDataMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Before anything else answers an MCP request: a foreign Origin is refused outright.
    "tiddly.origin.OriginCheckMiddleware",
    # Serves the admin's CSS/JS under uvicorn (no separate web server needed), collected or not.
    "tiddly.staticfiles.StaticFilesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # CommonMiddleware, but a write to an API path without its slash is a JSON 404, not a
    # redirect that drops the body (tiddly/json_errors.py).
    "tiddly.json_errors.JsonCommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "tiddly.urls"
WSGI_APPLICATION = "tiddly.wsgi.application"
ASGI_APPLICATION = "tiddly.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


# Django's SQLite backend, keeping closed connections for the next request (tiddly/sqlite).
SQLITE_ENGINE = "tiddly.sqlite"


def _sqlite_options() -> dict[str, object]:
    # WAL lets readers run beside the one writer; IMMEDIATE transactions take the write lock up
    # front so concurrent edits queue on the busy timeout instead of failing with "database is
    # locked" when a read lock is upgraded. A log that grew past 64 MB is cut back when it restarts.
    # secure_delete FAST: Debian's SQLite zeroes every page a write frees, so rewriting a long
    # content logged its pages twice; a permanent delete still zeroes (tiddly.sqlite.base.erasing).
    return {
        "init_command": (
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
            "PRAGMA journal_size_limit=67108864; PRAGMA secure_delete=FAST;"
        ),
        "transaction_mode": "IMMEDIATE",
        "timeout": env_int("TIDDLY_SQLITE_TIMEOUT", 30, minimum=1),
    }


def _sqlite(name: object) -> dict[str, object]:
    return {
        "ENGINE": SQLITE_ENGINE,
        "NAME": name,
        "OPTIONS": _sqlite_options(),
        # Tests run on an in-memory database, as Django's own SQLite backend does by default
        # (named explicitly: pytest-django recognises that default by the engine's name only).
        "TEST": {"NAME": ":memory:"},
    }


def _database() -> dict[str, object]:
    url = env_str("DATABASE_URL")
    if not url:
        return _sqlite(BASE_DIR / "db.sqlite3")
    config: dict[str, object] = dict(dj_database_url.parse(url, conn_max_age=0))
    if config["ENGINE"] == "django.db.backends.sqlite3":
        return {**config, **_sqlite(config["NAME"])}
    if config["ENGINE"] == "django.db.backends.postgresql":
        # CONN_MAX_AGE > 0 leaks one connection per request thread under ASGI; Django's native
        # psycopg pool is the supported way to reuse connections.
        config["OPTIONS"] = {
            "pool": {
                "min_size": env_int("TIDDLY_DB_POOL_MIN", 2, minimum=0),
                "max_size": env_int("TIDDLY_DB_POOL_MAX", 20, minimum=1),
                "timeout": env_int("TIDDLY_DB_POOL_TIMEOUT", 10, minimum=1),
            }
        }
    return config


DATABASES = {"default": _database()}
# Idle SQLite connections each process keeps per database file for the next request (0: none).
TIDDLY_SQLITE_POOL = env_int("TIDDLY_SQLITE_POOL", 8, minimum=0)

# The one task queue (SPEC §15): background work (page capture, search indexing, webhook
# deliveries) is a row in the project's database until a worker runs it. The web process runs one
# worker itself unless TIDDLY_EMBEDDED_WORKER=0; `python manage.py worker` runs more, anywhere.
# QUEUES empty: any queue name (webhook deliveries get one queue per owner, tiddly.tasks).
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": []}}
# The web server starts one worker as a child process (lower CPU priority) unless this is 0.
TIDDLY_EMBEDDED_WORKER = env_bool("TIDDLY_EMBEDDED_WORKER", True)
# A running task renews its claim every third of this; one whose heartbeat stopped this long
# ago is taken for interrupted (its worker died) and queued again, at most
# TIDDLY_TASK_MAX_ATTEMPTS times in all before it is marked failed.
TIDDLY_TASK_LEASE_SECONDS = env_int("TIDDLY_TASK_LEASE_SECONDS", 300, minimum=1)
TIDDLY_TASK_MAX_ATTEMPTS = env_int("TIDDLY_TASK_MAX_ATTEMPTS", 3, minimum=1)
# Threads of each worker that deliver webhooks (their own lane; owners take turns). 0: the
# worker's main loop delivers too, after the rest (a dead receiver then delays the rest).
TIDDLY_WEBHOOK_WORKERS = env_int("TIDDLY_WEBHOOK_WORKERS", 4, minimum=0)
# How long the web server's shutdown waits for its worker child's current tasks before it kills
# the child and queues those tasks again.
TIDDLY_WORKER_STOP_SECONDS = env_int("TIDDLY_WORKER_STOP_SECONDS", 8, minimum=0)
# How long the web server's start waits for its worker child to be set up before it answers
# anyway (the child goes on starting).
TIDDLY_WORKER_READY_SECONDS = env_int("TIDDLY_WORKER_READY_SECONDS", 10, minimum=0)
# While the web server is busy, its worker child pauses this many times as long as each step of
# indexing took (tiddly/giving_way.py); 0: never pauses.
TIDDLY_WORKER_GIVE_WAY = env_int("TIDDLY_WORKER_GIVE_WAY", 3, minimum=0)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


def _cache() -> dict[str, object]:
    """Redis with CACHE_URL; otherwise a file cache every worker process on this host shares
    (SPEC §8: throttles hold across `--workers N`; a per-process memory cache multiplied every
    limit by N). A file cache rather than Django's database cache table: it needs no table
    (no `createcachetable` step to forget, nothing for migrations, tests or the bench to set
    up) and puts no throttle writes on the database, which SQLite serialises. One directory per
    database, so two instances on one host do not share limits; TIDDLY_CACHE_DIR overrides it.
    Several hosts need CACHE_URL (as they need a shared database)."""
    url = env_str("CACHE_URL")
    if url:
        return {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}
    db = DATABASES["default"]
    key = "|".join(str(db.get(k, "")) for k in ("ENGINE", "HOST", "PORT", "NAME"))
    default_dir = Path(tempfile.gettempdir()) / (
        "tiddly-cache-" + hashlib.sha256(key.encode()).hexdigest()[:16]
    )
    return {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": env_str("TIDDLY_CACHE_DIR") or str(default_dir),
        "OPTIONS": {"MAX_ENTRIES": 100_000},
    }


CACHES = {"default": _cache()}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# Development serves straight from the apps' static folders; production runs collectstatic
# (`make run` does) and serves compressed, cache-busted files from STATIC_ROOT. Without it the
# admin still works (tiddly/staticfiles.py) and `manage.py check` warns.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_MANIFEST_STRICT = False
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "tiddly.staticfiles.StaticStorage"
        )
    },
}

# --- Tiddly -----------------------------------------------------------------------------------

TIDDLY_MAX_CONTENT_CHARS = env_int("TIDDLY_MAX_CONTENT_CHARS", 10_000_000, minimum=1)
TIDDLY_LIMITS = {
    "title": env_int("TIDDLY_MAX_TITLE_CHARS", 200, minimum=1),
    "description": env_int("TIDDLY_MAX_DESCRIPTION_CHARS", 1000, minimum=1),
    "content": TIDDLY_MAX_CONTENT_CHARS,
    "url": 2048,
    "name": 100,
    "tag": 50,
    "tags_per_item": 100,
    "argument_name": 100,
    "argument_description": 1000,
    "arguments_per_prompt": 100,
    "filter_name": 100,
    "filter_groups": 20,
    "relationship_description": 500,
    "relationships_per_item": 50,
}
# The largest file POST /api/import/, the admin's Import page and `import_items` accept (SPEC §14).
TIDDLY_IMPORT_MAX_BYTES = env_int("TIDDLY_IMPORT_MAX_BYTES", 50 * 1024 * 1024, minimum=1)
# How long an authenticated API token (and its user) is cached; saving or deleting either clears
# it at once in the shared cache. 0 disables the cache.
TIDDLY_TOKEN_CACHE_SECONDS = env_int("TIDDLY_TOKEN_CACHE_SECONDS", 60, minimum=0)
# Each process asks the database at most this often whether any token was revoked or deleted
# since (one indexed single-row read) and then forgets its cached tokens: revocation reaches
# every worker within these seconds even without a shared cache (SPEC §8).
TIDDLY_TOKEN_RECHECK_SECONDS = env_int("TIDDLY_TOKEN_RECHECK_SECONDS", 2, minimum=0)
# Large contents (stored size >= MIN_BYTES) kept in each process, keyed by updated_at, so partial
# reads and searches of big items skip the multi-megabyte fetch (PostgreSQL). 0 disables.
TIDDLY_CONTENT_CACHE_CHARS = env_int("TIDDLY_CONTENT_CACHE_CHARS", 32_000_000, minimum=0)
TIDDLY_CONTENT_CACHE_MIN_BYTES = env_int("TIDDLY_CONTENT_CACHE_MIN_BYTES", 256 * 1024, minimum=1)
# Within-item search lists at most this many matches (total_matches stays exact; the response
# says truncated: true beyond it), so a one-letter query on a 10 MB item can't exhaust memory.
TIDDLY_SEARCH_MAX_MATCHES = env_int("TIDDLY_SEARCH_MAX_MATCHES", 10_000, minimum=1)
# One str-replace request (replace_all, edits, dry_run alike) makes at most this many
# replacements; more are refused up front with 400 field_limit_exceeded (SPEC §4.3 Cost).
TIDDLY_MAX_REPLACEMENTS = env_int("TIDDLY_MAX_REPLACEMENTS", 100_000, minimum=1)
# The admin's edit page shows an excerpt instead of a textarea above this many characters.
TIDDLY_ADMIN_INLINE_CONTENT_CHARS = env_int("TIDDLY_ADMIN_INLINE_CONTENT_CHARS", 200_000)
TIDDLY_ADMIN_EXCERPT_CHARS = 5_000
# Prompt rendering bounds (SPEC §5.2): output characters (also the largest value a template may
# build), steps (loop iterations, calls, operators) and CPU time of one render.
TIDDLY_RENDER_MAX_CHARS = env_int("TIDDLY_RENDER_MAX_CHARS", 1_000_000, minimum=1)
TIDDLY_RENDER_MAX_STEPS = env_int("TIDDLY_RENDER_MAX_STEPS", 1_000_000, minimum=1)
TIDDLY_RENDER_MAX_CPU_MS = env_int("TIDDLY_RENDER_MAX_CPU_MS", 2000, minimum=1)
TIDDLY_HISTORY_MAX_VERSIONS = env_int("TIDDLY_HISTORY_MAX_VERSIONS", 100, minimum=1)
TIDDLY_HISTORY_DAYS = env_int("TIDDLY_HISTORY_DAYS", 30, minimum=0)
TIDDLY_HISTORY_SNAPSHOT_EVERY = env_int("TIDDLY_HISTORY_SNAPSHOT_EVERY", 200, minimum=1)
# Items one revert-by-token request changes at most (SPEC §6); the caller repeats until
# "remaining" is 0, so no request runs for long.
TIDDLY_REVERT_BATCH = env_int("TIDDLY_REVERT_BATCH", 500, minimum=1)
# A 409/412's server_state carries the item's content up to this length (SPEC §3.4).
TIDDLY_CONFLICT_CONTENT_CHARS = env_int("TIDDLY_CONFLICT_CONTENT_CHARS", 100_000, minimum=0)

# Public share pages (SPEC §17.4): requests per client IP per minute for /s/… (a brute-force
# guesser of tokens meets 429 long before it could matter; 256-bit tokens make it hopeless anyway).
TIDDLY_SHARE_THROTTLE_PER_MINUTE = env_int("TIDDLY_SHARE_THROTTLE_PER_MINUTE", 60, minimum=1)
TIDDLY_SHARE_THROTTLE_ENABLED = env_bool("TIDDLY_THROTTLE_ENABLED", True)
# Change feed and webhooks (SPEC §17.1, §17.2): how long changes are kept (an older cursor is a
# 410), how long deliveries are listed, and the retry schedule of a failing delivery (seconds).
TIDDLY_CHANGES_RETENTION_DAYS = env_int("TIDDLY_CHANGES_RETENTION_DAYS", 90, minimum=1)
TIDDLY_WEBHOOK_DELIVERY_DAYS = env_int("TIDDLY_WEBHOOK_DELIVERY_DAYS", 30, minimum=1)
TIDDLY_WEBHOOK_RETRY_DELAYS = env_int_list("TIDDLY_WEBHOOK_RETRY_DELAYS", [5, 30, 120, 600, 3600])
TIDDLY_MAX_WEBHOOKS = env_int("TIDDLY_MAX_WEBHOOKS", 20, minimum=1)  # per person
# How often (seconds) a task worker queues the pruning of expired changes and deliveries; 0 = never
# (then run `manage.py prune_changes` from cron).
TIDDLY_PRUNE_INTERVAL = env_int("TIDDLY_PRUNE_INTERVAL", 3600, minimum=0)
# Finished (successful or failed) task records are kept this many days, then pruned with the rest.
TIDDLY_TASK_RESULT_DAYS = env_int("TIDDLY_TASK_RESULT_DAYS", 7, minimum=1)

# Finding by meaning (SPEC §16): "local" (wordllama's shipped model, no network), "openai" (any
# OpenAI-compatible /v1/embeddings endpoint of the operator's) or "off".
TIDDLY_EMBEDDINGS = env_str("TIDDLY_EMBEDDINGS") or "local"
if TIDDLY_EMBEDDINGS not in ("local", "openai", "off"):
    raise ImproperlyConfigured("TIDDLY_EMBEDDINGS must be local, openai or off")
TIDDLY_EMBEDDINGS_URL = env_str("TIDDLY_EMBEDDINGS_URL") or "http://127.0.0.1:11434/v1"
TIDDLY_EMBEDDINGS_MODEL = env_str("TIDDLY_EMBEDDINGS_MODEL") or "nomic-embed-text"
TIDDLY_EMBEDDINGS_API_KEY = env_str("TIDDLY_EMBEDDINGS_API_KEY")
# Where the local model's shipped files are copied for its loader (default: a temp folder).
TIDDLY_EMBEDDINGS_CACHE = env_str("TIDDLY_EMBEDDINGS_CACHE")
# Items indexed per batch, and the wait before retrying when the provider is down.
TIDDLY_EMBEDDINGS_BATCH = env_int("TIDDLY_EMBEDDINGS_BATCH", 64, minimum=1)
# ... and at most this many characters of content per batch (one larger item is a batch alone).
TIDDLY_EMBEDDINGS_BATCH_CHARS = env_int("TIDDLY_EMBEDDINGS_BATCH_CHARS", 4_000_000, minimum=1)
TIDDLY_EMBEDDINGS_RETRY_SECONDS = env_int("TIDDLY_EMBEDDINGS_RETRY_SECONDS", 30, minimum=1)
# Writes come in bursts: the workers index marked items once no write has marked one for this
# many ms, or once the first mark has waited TIDDLY_INDEX_WAIT_MS (an edit stays findable within
# SPEC §16's 5 s; a note edited 200 times in a row is cut and embedded a few times, not 200).
TIDDLY_INDEX_QUIET_MS = env_int("TIDDLY_INDEX_QUIET_MS", 1000, minimum=0)
TIDDLY_INDEX_WAIT_MS = env_int("TIDDLY_INDEX_WAIT_MS", 2000, minimum=0)
# Megabytes of in-memory search indexes one process holds, all owners together (SPEC §16).
TIDDLY_SEARCH_MEMORY_MB = env_int("TIDDLY_SEARCH_MEMORY_MB", 256, minimum=1)
# The cosine below which semantic/hybrid leave an item out; unset = the model's calibrated floor.
_min_score = env_str("TIDDLY_SEARCH_MIN_SCORE")
try:
    TIDDLY_SEARCH_MIN_SCORE = float(_min_score) if _min_score else None
except ValueError:
    raise ImproperlyConfigured("TIDDLY_SEARCH_MIN_SCORE must be a number in [-1, 1]") from None
if TIDDLY_SEARCH_MIN_SCORE is not None and not -1 <= TIDDLY_SEARCH_MIN_SCORE <= 1:
    raise ImproperlyConfigured("TIDDLY_SEARCH_MIN_SCORE must be a number in [-1, 1]")

# A JSON body may carry a full-size content field; leave room for escaping (\n, \", \uXXXX).
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int(
    "TIDDLY_MAX_BODY_BYTES", TIDDLY_MAX_CONTENT_CHARS * 6 + 1_000_000, minimum=1024
)

# How many requests with a body of 1 MB or more, or GETs whose last run answered that much or
# read a long content, one web process runs at once (the others wait their turn;
# tiddly/middleware.py); 0: no limit.
TIDDLY_LARGE_REQUESTS_AT_ONCE = env_int("TIDDLY_LARGE_REQUESTS_AT_ONCE", 2, minimum=0)

_THROTTLE = env_bool("TIDDLY_THROTTLE_ENABLED", True)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Bearer first: its authenticate_header() makes DRF answer 401 + WWW-Authenticate: Bearer.
        "tiddly.auth.BearerTokenAuthentication",
        "tiddly.auth.SessionAuthentication",
    ],
    # HasScope checks the view's scope_area against the caller's scopes (SPEC §8.1).
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "tiddly.scopes.HasScope",
    ],
    "DEFAULT_PARSER_CLASSES": ["tiddly.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": [
        "tiddly.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "tiddly.errors.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": (
        ["tiddly.throttling.ReadThrottle", "tiddly.throttling.WriteThrottle"] if _THROTTLE else []
    ),
    "DEFAULT_THROTTLE_RATES": {
        "read": env_str("TIDDLY_THROTTLE_READ", "600/min"),
        "write": env_str("TIDDLY_THROTTLE_WRITE", "240/min"),
        # Bookmark preview fetches and extracts a page inside the request (SPEC §15).
        "preview": env_str("TIDDLY_THROTTLE_PREVIEW", "30/min"),
    },
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Tiddly API",
    "DESCRIPTION": (
        "Bookmarks, notes and prompt templates that people and AI agents read, search and edit "
        "precisely. Authenticate with `Authorization: Bearer tdly_…`. Every error body is "
        "`{error, message, …}` with a stable machine code and an instructional message."
    ),
    "VERSION": __version__,
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/api/",
    # The item types (bookmark, note, prompt) wherever a field names one.
    "ENUM_NAME_OVERRIDES": {
        "ItemTypeEnum": "content.item_types.type_names",
        "ChangeActionEnum": "content.models.changes.ChangeAction.values",
        "HistoryActionEnum": "content.models.history.HistoryAction.values",
    },
    # Swagger UI and ReDoc from drf-spectacular-sidecar's static files, not a CDN: the docs work
    # offline and run the pinned version that was tested.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- MCP (the official mcp SDK; the two servers are mounted by mcp_bridge/urls.py) -------------

# How MCP requests authenticate (with IsAuthenticated): the same Bearer API tokens as the REST
# API. The name is the one django-mcp-server read, kept so existing settings keep working.
DJANGO_MCP_AUTHENTICATION_CLASSES = ["tiddly.auth.BearerTokenAuthentication"]

# --- OAuth 2.1 for hosted MCP clients (SPEC §8.2; django-oauth-toolkit, see tiddly/oauth/) -----

# The public origin behind a reverse proxy, e.g. https://tiddly.example.com: fixes the issuer,
# the resource URLs and the server's own Origin. Unset: derived from each request.
TIDDLY_PUBLIC_URL = (env_str("TIDDLY_PUBLIC_URL") or "").rstrip("/")
# Browser origins (besides the server's own) allowed to call /mcp/*, e.g. an MCP Inspector.
TIDDLY_ALLOWED_ORIGINS = env_list("TIDDLY_ALLOWED_ORIGINS", [])
# Dynamic client registration: at most this many registrations per client IP per hour, and at
# most this many redirect URIs per client.
TIDDLY_OAUTH_REGISTRATIONS_PER_HOUR = env_int("TIDDLY_OAUTH_REGISTRATIONS_PER_HOUR", 20, minimum=1)
TIDDLY_OAUTH_MAX_REDIRECT_URIS = 10
# `manage.py cleanup_oauth` removes registrations that never got a token after this many days.
TIDDLY_OAUTH_UNUSED_CLIENT_DAYS = env_int("TIDDLY_OAUTH_UNUSED_CLIENT_DAYS", 30, minimum=1)
# --- Outbound HTTP to user-supplied URLs (SPEC §15; tiddly/outbound.py) -----------------------

# Hosts (`host` or `host:port`, as written in URLs) fetched even though they resolve to a
# non-public address: an intranet wiki, or a local server in tests.
TIDDLY_OUTBOUND_ALLOWED_HOSTS = env_list("TIDDLY_OUTBOUND_ALLOWED_HOSTS", [])
# Fetch nothing but the allowed hosts (an air-gapped install; CI's fuzzing of /preview, capture
# and webhooks must never reach out to whatever URL a generator invents).
TIDDLY_OUTBOUND_ONLY_ALLOWED = env_bool("TIDDLY_OUTBOUND_ONLY_ALLOWED", False)
# Seconds per outbound attempt in all (connect, redirects, body). Tests lower it.
TIDDLY_OUTBOUND_TIMEOUT: float = env_int("TIDDLY_OUTBOUND_TIMEOUT", 15, minimum=1)

LOGIN_URL = "oauth-login"

# The toolkit's default models, named so Tiddly's own models can point at them (tiddly.models).
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL = "oauth2_provider.AccessToken"

OAUTH2_PROVIDER = {
    "SCOPES": {
        "content:read": "Read your bookmarks and notes, their tags, links and history",
        "content:write": "Create and change your bookmarks and notes",
        "prompts:read": "Read your prompt templates and render them",
        "prompts:write": "Create and change your prompt templates",
    },
    "DEFAULT_SCOPES": ["__all__"],
    "OAUTH2_SERVER_CLASS": "tiddly.oauth.server.Server",
    "OAUTH2_VALIDATOR_CLASS": "tiddly.oauth.validator.Validator",
    "ACCESS_TOKEN_GENERATOR": "tiddly.oauth.server.access_token",
    "REFRESH_TOKEN_GENERATOR": "tiddly.oauth.server.refresh_token",
    "ACCESS_TOKEN_EXPIRE_SECONDS": env_int("TIDDLY_OAUTH_ACCESS_SECONDS", 3600, minimum=60),
    "REFRESH_TOKEN_EXPIRE_SECONDS": env_int(
        "TIDDLY_OAUTH_REFRESH_SECONDS", 30 * 24 * 3600, minimum=3600
    ),
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ROTATE_REFRESH_TOKEN": True,
    # A rotated refresh token presented again revokes its whole family (stolen-token defence).
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "PKCE_REQUIRED": True,
    "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https"],
    "REQUEST_APPROVAL_PROMPT": "force",
    # RFC 9700 behaviour now rather than at django-oauth-toolkit 4.0: no implicit or password
    # grant, no "plain" PKCE, tokens stored only as checksums.
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": [
        "none",
        "client_secret_basic",
        "client_secret_post",
    ],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("TIDDLY_LOG_LEVEL", "WARNING")},
    "loggers": {
        # The MCP SDK logs every request at INFO and every tool error with a traceback; tool
        # errors are answered to the client as isError results, which is where they belong.
        "mcp": {"level": "WARNING"},
        "django.request": {"level": "ERROR"},
    },
}

# Page capture (SPEC §15): TIDDLY_CAPTURE=0 turns capture off (nothing is fetched or extracted).
TIDDLY_CAPTURE = env_bool("TIDDLY_CAPTURE", True)
# Page extraction (HTML, PDF: captures, page_html, preview) runs in a child process stopped past
# this many seconds, or when it grows by this many MB (tiddly/sandbox.py): `too complex`.
TIDDLY_EXTRACT_SECONDS = env_int("TIDDLY_EXTRACT_SECONDS", 10, minimum=1)
TIDDLY_EXTRACT_MEMORY_MB = env_int("TIDDLY_EXTRACT_MEMORY_MB", 512, minimum=64)
