"""gunicorn's settings for the service: ``gunicorn -c gunicorn.conf.py 'api:create_app()'``
(gunicorn also reads this file by itself when it is started in this directory).

- The app checks the request line and the header fields itself (``MAX_REQUEST_LINE``,
  ``MAX_REQUEST_HEADERS``, ``MAX_HEADER_BYTES``) and answers 414 and 431 as problems
  (application/problem+json). gunicorn's own limits are set to twice those, so that it is
  the app that answers; only a request past gunicorn's limits (or malformed HTTP) gets
  gunicorn's plain HTML answer (docs/operations.md lists them).
- The log is JSON, as the app's: gunicorn's own lines use the app's formatter; the access
  log is the app's (``api.access``), so gunicorn's is off (:class:`Logger`).
- Prometheus: the processes share their values in ``PROMETHEUS_MULTIPROC_DIR`` (made here
  when unset), emptied when the server starts; a worker that exits leaves the live gauges.

Every value may be overridden on the command line or in ``GUNICORN_CMD_ARGS``.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from gunicorn import glogging

#: the metrics directory this file made (none given): removed when the server exits
_made_dir = None
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):  # before prometheus_client is imported (with the app)
    _made_dir = os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="solitaire-verifier-metrics-")

from api.platform.config import load_settings  # noqa: E402 (after the environment above)

_settings = load_settings(os.path.join(os.path.dirname(os.path.abspath(__file__)), "instance"))

bind = "127.0.0.1:8000"  # behind the proxy on the same machine; --bind (or GUNICORN_CMD_ARGS) for others
#: two processes a core, of four threads each: a record's request mostly waits for its commit to be flushed
#: (docs/performance.md compares the layouts)
workers = int(os.environ.get("WEB_CONCURRENCY", 2 * (os.cpu_count() or 1)))
worker_class = "gthread"
threads = 4
timeout = 30
graceful_timeout = 30
keepalive = 5
control_socket_disable = True  # (gunicorn 25+: no gunicornc socket in the service user's home)

# the app's limits answer first (problem+json); gunicorn's are twice as large (its ceiling for the line: 8190)
limit_request_line = min(8190, 2 * _settings["MAX_REQUEST_LINE"])
limit_request_fields = min(32768, 2 * _settings["MAX_REQUEST_HEADERS"])
limit_request_field_size = 2 * _settings["MAX_HEADER_BYTES"]

accesslog = None  # the app logs every request (api.access), in JSON


class Logger(glogging.Logger):
    """gunicorn's logger without its access log unless ``--access-logfile`` asks for it. With
    ``logconfig_dict`` set, gunicorn builds every request's access fields (a dict of the
    environ's headers) even though nothing logs them: about 3 % of a health check's CPU.
    The app logs each request itself."""

    def access(self, resp: Any, req: Any, environ: Any, request_time: Any) -> None:
        if self.cfg.accesslog:
            super().access(resp, req, environ, request_time)


logger_class = Logger
errorlog = "-"
logconfig_dict: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "api.platform.logs.JsonFormatter"}},
    "handlers": {"stderr": {"class": "api.platform.logs.StderrHandler", "formatter": "json"}},
    "root": {"handlers": ["stderr"], "level": "WARNING"},
    "loggers": {"gunicorn.error": {"handlers": ["stderr"], "level": _settings["LOG_LEVEL"], "propagate": False}},
}


def on_starting(server: Any) -> None:
    from api.platform.metrics import clear_multiproc_dir

    clear_multiproc_dir()


def child_exit(server: Any, worker: Any) -> None:
    from api.platform.metrics import process_gone

    process_gone(worker.pid)


def on_exit(server: Any) -> None:
    if _made_dir is not None:
        import shutil

        shutil.rmtree(_made_dir, ignore_errors=True)
