"""Settings from the environment: production settings pass `check --deploy`, and without DEBUG
a SECRET_KEY is required (foundation issue)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCTION = {"DEBUG": "false", "SECRET_KEY": "x" * 20 + "-production-like-secret-key-0123456789abcdef",
              "ALLOWED_HOSTS": "backoffice.example.com", "DATABASE_URL": "sqlite:////tmp/deploy-check.sqlite3",
              "ENV_FILE": "/dev/null"}


def manage(*args, env):
    clean = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY", "SECURE_SSL_REDIRECT")}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env={**clean, **env},
                          capture_output=True, text=True, timeout=120)


def test_check_deploy_is_clean_with_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_secret_key_is_required_when_debug_is_off(tmp_path):
    env = {k: v for k, v in PRODUCTION.items() if k != "SECRET_KEY"}
    result = manage("check", env=env)
    assert result.returncode != 0 and "SECRET_KEY" in result.stderr


def test_runtime_requirements_ship_no_test_tools():
    """``make run`` installs requirements.txt only: test and benchmark tools stay in requirements-test.txt."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    runtime = {line.split("==")[0].lower() for line in (root / "requirements.txt").read_text().splitlines()
               if line and not line.startswith("#")}
    assert not runtime & {"pytest", "pytest-django", "playwright", "schemathesis", "hypothesis", "faker",
                          "factory-boy", "factory_boy", "ruff", "grimp"}
    assert "-r requirements.txt" in (root / "requirements-test.txt").read_text().splitlines()


def test_x_forwarded_proto_is_believed_only_when_configured():
    show = ("shell", "-c", "from django.conf import settings; print(settings.SECURE_PROXY_SSL_HEADER)")
    assert manage(*show, env=PRODUCTION).stdout.strip().endswith("None")
    trusted = manage(*show, env={**PRODUCTION, "TRUST_X_FORWARDED_PROTO": "true"})
    assert trusted.stdout.strip().endswith("('HTTP_X_FORWARDED_PROTO', 'https')"), trusted.stderr


def make_dry_run(*args):
    return subprocess.run(["make", "-n", *args], cwd=ROOT, capture_output=True, text=True, timeout=60).stdout


def test_make_serve_serves_what_is_there_on_port():
    serve = make_dry_run("serve", "PORT=8611")
    assert "runserver 127.0.0.1:8611" in serve and "http://127.0.0.1:8611/admin/" in serve
    assert "run_tables" not in serve and "create_demo_users --url" not in serve.split("echo")[0]
    run = make_dry_run("run", "PORT=8611")
    assert "create_demo_users --url http://127.0.0.1:8611" in run and "runserver 127.0.0.1:8611" in run
    for commands in (serve, run):  # the server serves the static files collected before it starts
        assert commands.index("collectstatic --noinput") < commands.index("runserver")


def test_static_files_are_served_without_debug(tmp_path, settings, client):
    """With DEBUG off (as in production) the collected static files are served by the application
    itself: the admin's stylesheet and Redoc's script behind /api/docs/."""
    from django.core.management import call_command

    assert not settings.DEBUG
    settings.STATIC_ROOT = tmp_path
    call_command("collectstatic", interactive=False, verbosity=0)
    for path in ("/static/admin/css/base.css", "/static/drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert b"".join(response.streaming_content)
