"""Settings for the live-blackjack back office, read from the environment (django-environ).

With no environment at all the platform runs on SQLite with Celery tasks executed in-process
(the zero-setup default). ``DATABASE_URL`` (PostgreSQL) and ``CELERY_BROKER_URL`` (Redis) switch
to the real parts. ``DEBUG`` is off unless asked for, and ``SECRET_KEY`` is then required.
A ``.env`` file at the project root (or ``ENV_FILE``) is read if present (``make run`` writes one).
"""

import ipaddress
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(env("ENV_FILE", default=str(BASE_DIR / ".env")), overwrite=False)

DEBUG = env.bool("DEBUG", default=False)
if DEBUG:
    SECRET_KEY = env("SECRET_KEY", default="insecure-local-development-key-only-for-debug-mode")
else:
    SECRET_KEY = env("SECRET_KEY")  # required: ImproperlyConfigured when missing

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "config.apps.BackOfficeAdminConfig",  # django.contrib.admin, its index the dashboard (config.admin)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "config.web",  # its runserver (a deep listen queue) before staticfiles' own
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "rest_framework_api_key",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Redoc served from our static files: /api/docs/ works offline
    "django_celery_beat",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "axes",
    "accounts",
    "wallets",
    "tables",
    "wagering",
    "settlement",
    "adminkit",
    "delivery.simulator",
]

MIDDLEWARE = [
    "config.errors.refuse_unknown_hosts",  # first: an API request to a host not served is a JSON 400
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",  # serves STATIC_ROOT (manage.py collectstatic)
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last: answers a locked-out login
]

ROOT_URLCONF = "config.urls"

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

WSGI_APPLICATION = "config.wsgi.application"

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True  # a kept connection the database ended is replaced before use
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite has one writer at a time. Each transaction takes the write lock when it begins
    # (IMMEDIATE), so two requests never deadlock upgrading a read lock; a writer waits up to
    # ``timeout`` seconds for it; readers go on beside the writer (write-ahead log). Tests use a
    # file too: an in-memory database's shared cache refuses a busy table instead of waiting.
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "timeout": env.int("SQLITE_BUSY_TIMEOUT", default=20), "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"})
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("TEST", {})["NAME"] = str(BASE_DIR / "test-db.sqlite3")

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- Staff login (the admin: adminkit.site) ----------------------------------------------------------
# Passwords are checked by axes' backend first: AXES_FAILURE_LIMIT wrong passwords for one username
# from one address lock that pair out for AXES_COOLOFF_MINUTES (the right password included); a
# success resets the count. Staff then give a TOTP code (django-otp); a session lasts 8 hours.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("AXES_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
SESSION_COOKIE_AGE = env.int("SESSION_COOKIE_AGE", default=8 * 3600)
OTP_TOTP_ISSUER = env("OTP_TOTP_ISSUER", default="Live blackjack back office")
# The password alone enrols a TOTP device only within this long of the account's creation or of a
# superuser's reset of its second factor (adminkit.site.enrolment_open), and never over a confirmed one.
OTP_ENROLMENT_WINDOW_SECONDS = env.int("OTP_ENROLMENT_WINDOW_SECONDS", default=72 * 3600)

LANGUAGE_CODE = "en-us"
USE_I18N = True
USE_TZ = True  # stored in UTC
# Operators see times in their own zone: admin pages and the Bet Record's date ranges. The APIs
# print ISO 8601 with the offset, so their clients read the same instants.
OPERATOR_TIME_ZONE = env("OPERATOR_TIME_ZONE", default="UTC")
TIME_ZONE = OPERATOR_TIME_ZONE
# Player sessions (minted by operators, ``POST /api/operator/v1/sessions/``): a session ends this
# long after it was opened, or after this long without a request, or when revoked. A web process
# remembers a session it checked for PLAYER_API_TOKEN_CACHE_SECONDS, so an end takes effect in
# every process within that many seconds.
PLAYER_SESSION_LIFETIME_SECONDS = env.int("PLAYER_SESSION_LIFETIME_SECONDS", default=8 * 3600)
PLAYER_SESSION_IDLE_SECONDS = env.int("PLAYER_SESSION_IDLE_SECONDS", default=30 * 60)
# Manual adjustments (settlement.adjustments; absolute amounts in major units of any currency): a
# Dispute officer makes one of at most DISPUTE_OFFICER_ADJUSTMENT_LIMIT, at most
# DISPUTE_OFFICER_DAILY_LIMIT of their own in 24 hours, and none taking one player's wallet past
# DISPUTE_OFFICER_PLAYER_DAILY_LIMIT in 24 hours. A Supervisor's that would take their adjustments
# posted alone in 24 hours past ADJUSTMENT_APPROVAL_THRESHOLD waits for a second Supervisor's approval.
DISPUTE_OFFICER_ADJUSTMENT_LIMIT = Decimal(env("DISPUTE_OFFICER_ADJUSTMENT_LIMIT", default="100.00"))
DISPUTE_OFFICER_DAILY_LIMIT = Decimal(env("DISPUTE_OFFICER_DAILY_LIMIT", default="500.00"))
DISPUTE_OFFICER_PLAYER_DAILY_LIMIT = Decimal(env("DISPUTE_OFFICER_PLAYER_DAILY_LIMIT", default="200.00"))
ADJUSTMENT_APPROVAL_THRESHOLD = Decimal(env("ADJUSTMENT_APPROVAL_THRESHOLD", default="1000.00"))

# One cache for every process (throttle counters, cached RTP reports): Redis in production
# (CACHE_URL=redis://127.0.0.1:6379/2); per-process memory for the zero-setup default.
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}
# Player API: tokens already looked up (with their user and player), in each process's memory for
# PLAYER_API_TOKEN_CACHE_SECONDS (0: look every token up); another process stops honouring a
# deleted token within that time (delivery.api.player.authentication).
CACHES["player_api_tokens"] = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                               "LOCATION": "player_api_tokens", "OPTIONS": {"MAX_ENTRIES": 10_000},
                               "TIMEOUT": env.int("PLAYER_API_TOKEN_CACHE_SECONDS", default=10)}

STATIC_URL = "static/"
# manage.py collectstatic copies the static files here; WhiteNoise's middleware serves them, DEBUG
# or not (make run and make serve collect them; in production run collectstatic on every deploy).
STATIC_ROOT = BASE_DIR / "staticfiles"

# The loggers that write request paths redact the secrets in them (config.logs); django.server
# (runserver's access lines) keeps Django's own handler and format.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact_secrets": {"()": "config.logs.RedactSecrets"}},
    "formatters": {"django.server": {"()": "django.utils.log.ServerFormatter", "format": "[{server_time}] {message}",
                                     "style": "{"}},
    "handlers": {"console": {"class": "logging.StreamHandler"},
                 "django.server": {"class": "logging.StreamHandler", "formatter": "django.server", "level": "INFO"}},
    "loggers": {"django.request": {"filters": ["redact_secrets"]},
                "django.server": {"handlers": ["django.server"], "filters": ["redact_secrets"], "level": "INFO",
                                  "propagate": False}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="WARNING")},
}

# --- Security (python manage.py check --deploy is clean when DEBUG is off) ---------------------
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
# Behind a TLS-terminating proxy that sets X-Forwarded-Proto (and strips a client's own), set
# TRUST_X_FORWARDED_PROTO=true; otherwise a client's header would make plain HTTP count as HTTPS.
if env.bool("TRUST_X_FORWARDED_PROTO", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
X_FRAME_OPTIONS = "DENY"

# --- REST framework -----------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.TokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # JSON only, never the browsable HTML API: the APIs' base views also ignore Accept and ?format=
    # (delivery.api.common.JSONOnly); the schema views keep their own renderers.
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "COERCE_DECIMAL_TO_STRING": True,
    "DATETIME_FORMAT": "iso-8601",
    # Requests per player (the player API, delivery.api.player) and per key (the operator API,
    # delivery.api.operator; a studio's service account, delivery.api.game); counters in the default cache.
    "DEFAULT_THROTTLE_RATES": {"player": env("PLAYER_API_RATE", default="600/min"),
                               # GET me asks a seamless player's balance of the operator's wallet
                               "player_me": env("PLAYER_ME_API_RATE", default="30/min"),
                               "operator": env("OPERATOR_API_RATE", default="1200/min"),
                               "game_server": env("GAME_SERVER_API_RATE", default="6000/min")},
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Live blackjack back office API",
    # ... and, for studios, a round's calls with one example per variant (docs/game-server-api.md)
    "DESCRIPTION": "Game-server API (/api/game/v1/), player Bet Record API (/api/v1/) and operator API "
                   "(/api/operator/v1/: players, sessions, transfers, bets, rounds, statement).\n\n"
                   + (BASE_DIR / "docs" / "game-server-api.md").read_text(encoding="utf-8"),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "REDOC_DIST": "SIDECAR",
    # Operations are described by their summary: the views' docstrings (their base classes') are
    # about the code, not for API users.
    "DISABLE_DOCSTRING_DESCRIPTIONS": True,
}

# --- Celery (namespace CELERY) ---------------------------------------------------------------------
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="")
# Zero-setup default: no broker configured -> tasks run in-process.
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
if not CELERY_BROKER_URL:
    CELERY_BROKER_URL = "memory://localhost/"  # with its host named, kombu warns of none on the console
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default=None)  # only tests and health checks read results
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A worker keeps its database connection from task to task under CONN_MAX_AGE and the health check,
# as a web process does from request to request (config.celery.reuse_database_connection); Celery's
# own Django fixup would close it around every task, so each settlement would connect first.
CELERY_DB_REUSE_MAX = 2**31
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=240)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=300)
# Longest countdown/ETA any task of ours uses; the Redis visibility timeout must exceed it and
# the hard time limit, or Redis redelivers a message that is still being worked on.
CELERY_MAX_COUNTDOWN = 600
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": max(CELERY_TASK_TIME_LIMIT, CELERY_MAX_COUNTDOWN) * 2 + 600,
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULER = "config.beat:AlertingScheduler"  # django-celery-beat's; a job it cannot queue is an Alert
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# --- Game-server API (delivery.api.game) ----------------------------------------------------------
# A signed request's timestamp may be at most this far from the clock (and its nonce is refused
# if used again within twice this long).
GAME_API_SIGNATURE_WINDOW_SECONDS = env.int("GAME_API_SIGNATURE_WINDOW_SECONDS", default=300)

# --- Seamless wallets (wallets; docs/wallet-api.md) ------------------------------------------------
# Networks an operator's wallet URL may resolve into although they are not the public internet
# (loopback, private, link-local, reserved: refused otherwise, when the URL is set and at every
# call; accounts.addresses), e.g. "10.20.0.0/16" for wallets reached over a private link. Default:
# none; with DEBUG, the loopback networks (make run's reference wallet on 127.0.0.1).
WALLET_ALLOWED_NETWORKS = [ipaddress.ip_network(network) for network in env.list(
    "WALLET_ALLOWED_NETWORKS", default=["127.0.0.0/8", "::1/128"] if DEBUG else [])]
# Prefix of every transaction id sent to an operator's wallet: unique per installation, never changed.
WALLET_INSTALLATION_ID = env("WALLET_INSTALLATION_ID", default="bj")
# Calls in flight at once to one operator's wallet (a bet batch's debits, a round's credits).
WALLET_CONCURRENCY = env.int("WALLET_CONCURRENCY", default=50)
# A movement failing this long becomes an Alert (cleared when it is delivered).
WALLET_ALERT_AFTER_SECONDS = env.int("WALLET_ALERT_AFTER_SECONDS", default=600)
# A stake debit left without its answer (or answered OK without its bet) this long by a crash is rolled back.
WALLET_STAKE_RECOVERY_SECONDS = env.int("WALLET_STAKE_RECOVERY_SECONDS", default=60)
# The admin waits at most this long (or the operator's own timeout, when shorter) for a seamless player's balance.
WALLET_BALANCE_TIMEOUT_MS = env.int("WALLET_BALANCE_TIMEOUT_MS", default=1000)
# ... and keeps its answer (known or not) this long: a player's balance is asked at most once per interval.
WALLET_BALANCE_CACHE_SECONDS = env.int("WALLET_BALANCE_CACHE_SECONDS", default=5)

# --- Settlement -----------------------------------------------------------------------------------
# The beat re-drives a RESULTED round still unsettled this long after its record arrived (a lost task).
SETTLEMENT_REDRIVE_AFTER_SECONDS = env.int("SETTLEMENT_REDRIVE_AFTER_SECONDS", default=120)
# ... and opens a critical alert for a round still RESULTED this long after: re-driven in vain, its
# settlement keeps failing on something the service cannot classify (a bug, a database fault).
SETTLEMENT_STUCK_AFTER_SECONDS = env.int("SETTLEMENT_STUCK_AFTER_SECONDS", default=900)
# Retries of a settlement task on a database OperationalError (lock timeout, deadlock, lost connection).
SETTLEMENT_TASK_MAX_RETRIES = env.int("SETTLEMENT_TASK_MAX_RETRIES", default=5)
# RTP watch (settlement.rtp_watch): alert when a window's observed RTP is more than RTP_WATCH_Z
# standard errors from the theoretical figure, on windows with at least RTP_WATCH_MIN_BETS bets.
RTP_WATCH_Z = env.float("RTP_WATCH_Z", default=4.0)
RTP_WATCH_MIN_BETS = env.int("RTP_WATCH_MIN_BETS", default=500)
