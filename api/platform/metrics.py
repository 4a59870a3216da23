"""Prometheus metrics, every family of every tier declared here (``prometheus_client``,
with the conventions of ``prometheus-flask-exporter`` for the HTTP ones).

- The web app serves ``GET /metrics`` (``api/routes/metrics.py``, with the HTTP requests'
  instrumentation) to loopback and to the networks of ``METRICS_ALLOW`` (anyone else: 403).
  Under gunicorn, set ``PROMETHEUS_MULTIPROC_DIR`` (``gunicorn.conf.py`` does when it is
  unset): each process writes its values there and a scrape adds them up, whichever process
  answers it.
- A worker (``celery --app api.tasks worker``) with ``WORKER_METRICS_PORT`` serves the same
  text on that port, from its main process, adding up its pool's processes (through
  ``PROMETHEUS_MULTIPROC_DIR``, made by the worker when it is unset); see :func:`start_worker_server`.

The places that count call one function each (:func:`verified`, :func:`record_stored`,
:func:`search_finished`, :func:`task_finished`), so that they move with the code they count;
this module speaks no HTTP, so services import it.
"""

from __future__ import annotations

import atexit
import glob
import ipaddress
import logging
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    multiprocess,
    start_http_server,
    values,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics import MetricWrapperBase
from sqlalchemy import event

import engine

log = logging.getLogger(__name__)
MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"

# -- the web tier ------------------------------------------------------------------------

REQUEST_DURATION = Histogram(
    "flask_http_request_duration_seconds", "Flask HTTP request duration in seconds",
    ["method", "path", "status"])
REQUESTS = Counter("flask_http_request_total", "Total number of HTTP requests", ["method", "status"])
VERIFICATIONS = Counter("solitaire_verifications_total", "Move logs replayed by the verifier for a request",
                        ["variant", "result"])
RECORDS = Counter("solitaire_records_total", "Records stored", ["variant", "ranked"])
FLAGS = Counter("solitaire_fairplay_flags_total", "Fair-play flags on the records stored", ["flag"])
POOL_CHECKED_OUT = Gauge("solitaire_db_pool_checked_out", "Database connections in use (all processes)",
                         multiprocess_mode="livesum")
POOL_SIZE = Gauge("solitaire_db_pool_size", "Database connections the pools keep (all processes)",
                  multiprocess_mode="livesum")
#: a request that matched no route: its path label (never the raw path: the label set stays bounded)
UNMATCHED = "<unmatched>"
#: the methods that are their own ``method`` label (RFC 9110's and PATCH); any other a client
#: sends (gunicorn passes any token on) is :data:`OTHER_METHOD`, so the label set stays bounded
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"})
OTHER_METHOD = "<other>"

# -- the worker tier -----------------------------------------------------------------------

TASKS = Counter("solitaire_tasks_total", "Celery tasks run, by how they ended", ["task", "state"])
TASK_DURATION = Histogram("solitaire_task_duration_seconds", "Celery task run time in seconds", ["task"],
                          buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 120, 300, 600, 1800))
SEARCHES = Counter("solitaire_searches_total", "Solver searches ended, by their answer", ["kind", "outcome"])
SEARCH_NODES = Counter("solitaire_search_nodes_total", "Positions the solver's searches examined", ["kind"])


def verified(verdict: Any) -> None:
    """A log replayed for a request (``/verify``, ``/check``, a submission)."""
    VERIFICATIONS.labels(verdict.code.variant, "legal" if verdict.legal else "illegal").inc()


def record_stored(variant: str, ranked: bool, flags: Iterable[dict[str, Any]]) -> None:
    """A new record was stored (not a repeated submission of a stored one)."""
    RECORDS.labels(variant, "true" if ranked else "false").inc()
    for item in flags:
        FLAGS.labels(item["flag"]).inc()


def search_finished(kind: str, outcome: str, statistics: dict[str, Any] | None) -> None:
    """A search (``deal`` or ``hint``) ended with ``outcome`` (winnable, unwinnable, unknown)."""
    SEARCHES.labels(kind, outcome).inc()
    nodes = (statistics or {}).get("nodes")
    if nodes:
        SEARCH_NODES.labels(kind).inc(nodes)


def task_finished(task: str, state: str, seconds: float | None) -> None:
    TASKS.labels(task, state.lower()).inc()
    if seconds is not None:
        TASK_DURATION.labels(task).observe(seconds)


# -- reading them ------------------------------------------------------------------------

class QueueDepth:
    """``solitaire_solver_queue_depth{queue}``: the tasks waiting in each of the app's Celery
    queues, asked of the broker at each scrape (a queue that does not exist is empty)."""

    def __init__(self, celery_app: Any) -> None:
        self.celery_app = celery_app

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("solitaire_solver_queue_depth", "Tasks waiting in each Celery queue",
                                   labels=["queue"])
        celery_app = self.celery_app
        try:
            with celery_app.connection_for_read() as connection:
                for queue in celery_app.conf.task_queues:  # (the app's own queues, as api.tasks declares them)
                    family.add_metric([queue.name], _waiting(connection, queue.name))
        except Exception as error:  # the broker is away: the scrape goes on without the gauge
            log.warning("metrics: the broker's queues could not be read: %s", error)
            return
        yield family


def _waiting(connection: Any, name: str) -> int:
    channel = connection.channel()
    try:
        if connection.transport.driver_type == "redis":
            # (kombu's passive declare misses the prefixed keys of global_keyprefix; its size adds the priority lists)
            return int(channel._size(name))
        return int(channel.queue_declare(queue=name, passive=True).message_count)
    except connection.channel_errors:  # no such queue yet: nothing waits in it
        return 0
    finally:
        channel.close()


class EngineBuild:
    """``solitaire_engine_info{build, version}``: 1, labelled with the engine this process runs,
    ``compiled`` or ``pure`` (:data:`engine.BUILD`), on both tiers. A server installed
    without a C compiler runs pure Python, with the same results, but its replays and searches
    are several times slower. An alert rule catches that."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("solitaire_engine_info", "The engine this server runs (1), by build and version",
                                   labels=["build", "version"])
        family.add_metric([engine.BUILD, engine.__version__], 1)
        yield family


class _ThisProcess:
    """The default registry's families (this process's values), inside another registry."""

    def collect(self) -> Iterator[Any]:
        yield from REGISTRY.collect()


class _WrittenFiles(multiprocess.MultiProcessCollector):
    """Every process's values, but for files of 0 bytes: a process creating its file (it is
    sized after it is made), or one killed in that moment, whose file stays empty. Read, they
    fail the whole scrape (prometheus/client_python#1199); they hold no value yet."""

    def collect(self) -> Iterable[Any]:
        files = [path for path in glob.glob(os.path.join(self._path, "*.db")) if _written(path)]
        return self.merge(files, accumulate=True)


def _written(path: str) -> bool:
    try:
        return os.path.getsize(path) > 0
    except OSError:  # (gone since the listing: its process ended)
        return False


def registry(extra: Iterable[Any] = ()) -> CollectorRegistry:
    """What a scrape reads: every process's values in multiprocess mode, else this process's."""
    out = CollectorRegistry()
    if os.environ.get(MULTIPROC_DIR):
        _WrittenFiles(out)
    else:
        out.register(_ThisProcess())
    for collector in (EngineBuild(), *extra):
        out.register(collector)
    return out


def allowed(address: str | None, networks: Iterable[Any]) -> bool:
    """Loopback, or an address in one of ``networks`` (``METRICS_ALLOW``).

    >>> allowed("127.0.0.1", []), allowed("::1", []), allowed("10.1.2.3", []), allowed("10.1.2.3", ["10.0.0.0/8"])
    (True, True, False, True)
    """
    try:
        ip = ipaddress.ip_address(address or "")
    except ValueError:
        return False
    return ip.is_loopback or any(ip in ipaddress.ip_network(network, strict=False) for network in networks)


# -- the worker's server -------------------------------------------------------------------

def watch_pool(engine: Any) -> None:
    """Count the engine's pooled connections in use, and add its pool's size to the total."""
    size = getattr(engine.pool, "size", None)
    if callable(size):
        POOL_SIZE.inc(size())
    event.listen(engine, "checkout", lambda *_: POOL_CHECKED_OUT.inc())
    event.listen(engine, "checkin", lambda *_: POOL_CHECKED_OUT.dec())


def clear_multiproc_dir() -> None:
    """Delete the values of earlier runs (a server's start: gunicorn's master, a worker's main process)."""
    directory = os.environ.get(MULTIPROC_DIR)
    if directory and os.path.isdir(directory):
        for name in os.listdir(directory):
            if name.endswith(".db"):
                os.remove(os.path.join(directory, name))


def make_multiproc_dir() -> str:
    """Make a ``PROMETHEUS_MULTIPROC_DIR`` for this process and those it forks after this (as
    ``gunicorn.conf.py`` does for the web tier), removed when this process exits, and move this
    process's families to it. prometheus_client chooses where values live when it is imported
    (with the app, before a worker's start): its choice is made again, and the families
    declared here start again in the directory (they hold nothing yet in a worker's main process)."""
    directory = os.environ[MULTIPROC_DIR] = tempfile.mkdtemp(prefix="solitaire-verifier-worker-metrics-")
    owner = os.getpid()

    def remove() -> None:
        if os.getpid() == owner:  # (never from a forked pool process that exits)
            shutil.rmtree(directory, ignore_errors=True)

    atexit.register(remove)
    values.ValueClass = values.get_value_class()
    for family in globals().values():
        if isinstance(family, MetricWrapperBase):
            if family._labelnames:
                family._metrics.clear()  # (children are made on first use, from the new class)
            else:
                family._metric_init()
    log.info("worker metrics: %s was unset; the worker's processes share %s", MULTIPROC_DIR, directory)
    return directory


def process_gone(pid: int) -> None:
    """A process of a multiprocess server ended: its live gauges leave the sums."""
    if os.environ.get(MULTIPROC_DIR):
        multiprocess.mark_process_dead(pid)


def start_worker_server(port: int) -> None:
    """Serve the worker tier's metrics on ``port`` (all addresses, like a node exporter), from
    the calling process: a Celery worker's main process, whose pool processes (forked) write to
    ``PROMETHEUS_MULTIPROC_DIR`` (made here when unset: :func:`make_multiproc_dir`)."""
    if not os.environ.get(MULTIPROC_DIR):
        make_multiproc_dir()
    clear_multiproc_dir()
    start_http_server(port, registry=registry())
    log.info("worker metrics on port %d", port)
