"""``deploy/`` is kept in step with the service and with docs/operations.md: the compose file
parses and runs the service's own programs, the systemd units pass ``systemd-analyze verify``
and the alert rules ``promtool check`` (each where the tool is installed), every variable the
examples set is a setting, nginx's own error pages are problems, and every ``flask --app api``
command the guides show is a command of the app with options it takes."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from api.platform.config import SETTINGS, load_settings
from api.tasks import DELIVER, QUEUES
from tests.conftest import ROOT, problem_validator

DEPLOY = ROOT / "deploy"
SETTING_NAMES = {setting.name for setting in SETTINGS}
SETTINGS_BY_NAME = {setting.name: setting for setting in SETTINGS}
#: variables the examples set that are not the app's settings: gunicorn's and prometheus_client's
OTHER_VARIABLES = {"WEB_CONCURRENCY", "PROMETHEUS_MULTIPROC_DIR"}
BIN = Path(sys.executable).parent


def env_file(path: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#"))
    return {name.strip(): value.strip() for name, value in pairs}


def test_the_compose_file_runs_the_services_programs_with_known_settings():
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text(encoding="utf-8"))
    services = compose["services"]
    assert set(services) == {"postgres", "redis", "migrate", "web", "worker", "webhooks", "beat"}
    for name in ("migrate", "web", "worker", "webhooks", "beat"):
        service = services[name]
        program = service["command"][0]
        assert (BIN / program).exists(), f"{name}: {program} is not one of the service's programs"
        assert set(service["environment"]) <= SETTING_NAMES | OTHER_VARIABLES, name
        settings = {k: v for k, v in service["environment"].items() if k in SETTING_NAMES}
        load_settings("/nonexistent", environ=settings)  # every value parses
    assert services["worker"]["environment"]["WORKER_METRICS_PORT"] == "9808"
    # the webhook deliveries have a worker of their own, which the other leaves them to
    webhooks_queue = f"{SETTINGS_BY_NAME['CELERY_QUEUE_PREFIX'].default}.{QUEUES[DELIVER]}"
    assert option(services["worker"]["command"], "--exclude-queues") == webhooks_queue
    assert option(services["webhooks"]["command"], "--queues") == webhooks_queue
    assert services["webhooks"]["environment"]["WORKER_METRICS_PORT"] not in ("9808", None)
    assert "/var/lib/solitaire-verifier" in " ".join(services["beat"]["command"])  # its volume
    assert services["beat"]["volumes"] == ["beat-state:/var/lib/solitaire-verifier"]


def option(command: list[str], name: str) -> str | None:
    """The value of a command's ``--name value`` option."""
    return command[command.index(name) + 1] if name in command else None


def dockerfile_stages(text: str) -> list[list[str]]:
    """The Dockerfile's instructions (continued lines joined), a list a ``FROM`` stage."""
    stages: list[list[str]] = []
    for line in re.sub(r"\\\n", " ", text).splitlines():
        line = line.strip()
        if line.startswith("FROM "):
            stages.append([])
        if line and not line.startswith("#") and stages:
            stages[-1].append(line)
    return stages


def test_the_image_is_built_from_every_file_the_install_reads_with_a_compiler():
    """The image's build stage gets what ``pip install`` reads (pyproject.toml, setup.py,
    the readme, the packages) and what the app runs with (migrations/ beside api/,
    gunicorn.conf.py), installs a C compiler and fails unless the compiled engine loads; the
    context carries no compiled module of the checkout's own."""
    import tomllib

    from api.platform.db import MIGRATIONS

    build, run = dockerfile_stages((DEPLOY / "Dockerfile").read_text(encoding="utf-8"))
    copied = {source for line in build if line.startswith("COPY ")
              for source in shlex.split(line)[1:-1] if not source.startswith("--")}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    packages = {pattern.rstrip("*") for pattern in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert {"pyproject.toml", "setup.py", project["project"]["readme"], MIGRATIONS.name,
            "gunicorn.conf.py"} | packages <= copied, copied
    assert any("apt-get install" in line and " gcc " in line for line in build)
    assert any("pip install" in line and "verifier engine --expect auto" in line for line in build)
    assert any(line.startswith("COPY --from=build /app /app") for line in run)  # the compiled modules
    assert not any("apt-get" in line for line in run)  # no compiler in the image that runs
    assert "**/*.so" in (ROOT / ".dockerignore").read_text(encoding="utf-8").split()


def test_the_example_environment_sets_only_settings_that_parse():
    values = env_file(DEPLOY / "solitaire-verifier.env.example")
    assert set(values) <= SETTING_NAMES | OTHER_VARIABLES, set(values) - SETTING_NAMES - OTHER_VARIABLES
    load_settings("/nonexistent", environ={k: v for k, v in values.items() if k in SETTING_NAMES})


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_the_systemd_units_verify(tmp_path):
    units = sorted((DEPLOY / "systemd").glob("*.service"))
    assert [unit.name for unit in units] == ["solitaire-verifier-beat.service", "solitaire-verifier-web.service",
                                             "solitaire-verifier-webhooks.service",
                                             "solitaire-verifier-worker.service"]
    for unit in units:  # the checkout's place in the units is this one's, so that the programs exist
        (tmp_path / unit.name).write_text(unit.read_text().replace("/opt/solitaire-verifier", str(ROOT)))
        assert "/opt/solitaire-verifier/.venv/bin/" in unit.read_text()
    result = subprocess.run(["systemd-analyze", "verify", *(str(tmp_path / u.name) for u in units)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "Unknown" not in result.stderr, result.stderr
    beat = (DEPLOY / "systemd" / "solitaire-verifier-beat.service").read_text()
    assert "StateDirectory=solitaire-verifier" in beat and "--schedule %S/solitaire-verifier/" in beat
    webhooks_queue = f"{SETTINGS_BY_NAME['CELERY_QUEUE_PREFIX'].default}.{QUEUES[DELIVER]}"
    worker = (DEPLOY / "systemd" / "solitaire-verifier-worker.service").read_text()
    webhooks = (DEPLOY / "systemd" / "solitaire-verifier-webhooks.service").read_text()
    assert f"--exclude-queues {webhooks_queue} " in worker and f"--queues {webhooks_queue} " in webhooks


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian: prometheus) is not installed")
def test_the_alert_rules_and_the_scrape_config_pass_promtool():
    for args in (["check", "rules", "alerts.yml"], ["check", "config", "prometheus.yml"]):
        result = subprocess.run(["promtool", *args], cwd=DEPLOY / "prometheus", capture_output=True, text=True,
                                timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr


def test_the_alert_rules_use_the_families_the_service_exports():
    from prometheus_client.metrics import MetricWrapperBase

    from api.platform import metrics

    exported = {family.name for value in vars(metrics).values() if isinstance(value, MetricWrapperBase)
                for family in value.describe()}
    exported |= {"solitaire_solver_queue_depth", "solitaire_engine_info", "up"}  # (collected at each scrape)
    rules = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yml").read_text(encoding="utf-8"))
    for rule in rules["groups"][0]["rules"]:
        names = set(re.findall(r"\b([a-z_]+)(?:\{|\[|\)|\s|$)", rule["expr"])) - {
            "sum", "rate", "by", "max", "increase", "histogram_quantile", "le", "task"}
        base = {re.sub(r"_(bucket|count|sum|total)$", "", name) for name in names}
        assert base <= {re.sub(r"_(total)$", "", name) for name in exported}, (rule["alert"], base)


def test_nginx_answers_its_own_errors_as_problems():
    conf = (DEPLOY / "nginx" / "solitaire-verifier.conf").read_text(encoding="utf-8")
    pages = re.findall(r"error_page ([\d ]+) /errors/(\d+)\.json;", conf)
    assert {page for _, page in pages} == {path.stem for path in (DEPLOY / "nginx" / "errors").glob("*.json")}
    for codes, page in pages:
        problem = json.loads((DEPLOY / "nginx" / "errors" / f"{page}.json").read_text(encoding="utf-8"))
        assert not list(problem_validator().iter_errors(problem)), page
        assert problem["status"] == int(page) == int(codes.split()[0])
    assert "client_max_body_size 1m;" in conf  # MAX_CONTENT_LENGTH's default
    assert "location = /metrics" in conf  # never served through the proxy


def shown_commands(path: Path) -> list[list[str]]:
    """Every ``flask --app api …`` command in the code blocks of a guide, as arguments."""
    code, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced or line.startswith("    flask "):
            code.append(line)
    return [shlex.split(match.group(1)) for line in code
            for match in re.finditer(r"flask --app api ([^#|;&)]*)", line)]


@pytest.mark.parametrize("guide", ["docs/operations.md", "README.md"])
def test_every_flask_command_the_guides_show_exists_and_takes_its_options(make_app, guide, tmp_path, monkeypatch):
    import click
    from flask.cli import routes_command, run_command, shell_command

    app = make_app()
    builtin = {"run": run_command, "shell": shell_command, "routes": routes_command}  # flask's own
    commands = shown_commands(ROOT / guide)
    assert commands, guide
    monkeypatch.chdir(tmp_path)
    for args in commands:
        for arg in args:  # the files the commands read (export writes them)
            if arg.endswith(".jsonl"):
                (tmp_path / arg).touch()
        group, rest = app.cli, list(args)
        with app.app_context():
            context = click.Context(group, info_name="flask")
            while isinstance(group, click.Group) and rest and not rest[0].startswith("-"):
                command = builtin.get(rest[0]) if group is app.cli and rest[0] in builtin else \
                    group.get_command(context, rest[0])
                assert command is not None, f"{guide}: flask --app api {' '.join(args)}: no command {rest[0]!r}"
                group, rest = command, rest[1:]
                if rest and rest[0] in ("NAME", "FILE"):  # a placeholder in the text
                    rest = ["x"] + rest[1:]
            assert not isinstance(group, click.Group), f"{guide}: {' '.join(args)}: a group, not a command"
            group.make_context(args[-1], rest, parent=context)  # a usage error fails here


def test_the_readmes_201_example_is_what_the_service_answers(make_app, make_key, auth):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    curl = re.search(r"curl -s -i http://127.0.0.1:5000/api/v1/records .*?-d '(\{.*?\})'", readme, re.S)
    example = re.search(r"```\nHTTP/1.1 201 CREATED\n(.*?)\n\n(.*?)\n```", readme, re.S)
    assert curl and example
    app = make_app(API_KEYS_REQUIRED=True)
    response = app.test_client().post("/api/v1/records", json=json.loads(curl.group(1)),
                                      headers=auth(make_key("ann-laptop")))
    assert response.status == "201 CREATED"
    shown = dict(line.split(": ", 1) for line in example.group(1).splitlines())
    assert set(shown) == set(response.headers.keys())
    for name in ("Content-Type", "Content-Length", "Location", "X-Content-Type-Options"):
        assert shown[name] == response.headers[name], name
    body = json.loads(example.group(2).replace("\n", ""))
    actual = response.get_json()
    assert body == {**actual, "received_at": body["received_at"], "verified_at": body["verified_at"]}


def test_no_embedded_mode_warning_from_flask_commands(tmp_path):
    """The warning is for a server without a broker, not for `flask --app api …` commands (nor --help)."""
    env = {"PATH": str(BIN), "DATABASE_URL": f"sqlite:///{tmp_path / 'x.sqlite3'}", "HOME": str(tmp_path)}
    for args in (["--help"], ["keys", "list"]):
        result = subprocess.run([str(BIN / "flask"), "--app", "api", *args], cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        assert "CELERY_BROKER_URL" not in result.stderr, result.stderr


def test_the_embedded_mode_warning_comes_once_with_the_first_request(tmp_path, capsys):
    from api import create_app

    app = create_app({"DATABASE_URL": f"sqlite:///{tmp_path / 'x.sqlite3'}", "RATELIMIT_ENABLED": False})
    assert "CELERY_BROKER_URL" not in capsys.readouterr().err
    client = app.test_client()
    for _ in range(3):
        assert client.get("/api/v1/healthz").status_code == 200
    assert capsys.readouterr().err.count("no CELERY_BROKER_URL: searches run inside the requests") == 1


def test_the_beat_logs_the_apps_json_lines(tmp_path):
    """The beat, like the workers (tests/api/test_api_metrics.py), logs JSON objects, not Celery's own format."""
    from tests.api.celery_tier import BROKER_URL, require_broker, unique_prefix

    require_broker(BROKER_URL, "Redis")
    env = {"PATH": str(BIN), "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "CELERY_BROKER_URL": BROKER_URL,
           "CELERY_QUEUE_PREFIX": unique_prefix(), "DATABASE_URL": f"sqlite:///{tmp_path / 'x.sqlite3'}"}
    beat = subprocess.Popen([str(BIN / "celery"), "--app", "api.tasks", "beat", "--schedule",
                             str(tmp_path / "celerybeat-schedule"), "--loglevel", "INFO"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    watchdog = threading.Timer(60, beat.kill)  # a beat that never logs ends the loop below
    watchdog.start()
    try:
        lines = []
        assert beat.stdout is not None
        for line in beat.stdout:  # its first log line: "beat: Starting..."
            lines.append(line)
            if "Starting" in line:
                break
    finally:
        watchdog.cancel()
        beat.kill()
        beat.wait(30)
    started = json.loads(lines[-1])
    assert started["logger"].startswith("celery") and started["message"] == "beat: Starting...", lines
