"""gunicorn settings for the NIF web annotator (read from the working directory by `gunicorn wsgi:app`)."""
from __future__ import annotations

import logging
import os
import signal
import tempfile
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gunicorn.arbiter import Arbiter
    from gunicorn.workers.base import Worker

# Loopback by default: the service has no authentication and each request costs model time. Set
# ENTQA_BIND=0.0.0.0:8080 when GERBIL runs on another host or in a container.
bind = os.environ.get("ENTQA_BIND", "127.0.0.1:8080")

# Every worker process holds its own copy of the model and KB index, so workers = model copies
# (one per GPU), never the 2 x cores + 1 rule meant for I/O-bound apps.
workers = int(os.environ.get("ENTQA_WORKERS", "1"))

# gthread: the worker's main loop keeps heartbeating while a long document is being linked. The request
# threads only read, parse and wait: they hand documents to the one thread that holds the model
# (annotator.serving.linker_thread), where they queue. So threads are cheap, and 16 leave /health and new
# requests a free one while documents queue and a few clients are slow to send their bodies (which the
# app cuts off after ENTQA_BODY_TIMEOUT s of silence, annotator.service.request_limits).
worker_class = "gthread"
threads = int(os.environ.get("ENTQA_THREADS", "16"))

# /metrics sums the workers' metrics from files they write here (prometheus_client's multiprocess mode): a folder
# of this server's own unless one is given.
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="entqa-metrics-"))

# GERBIL waits up to 600 s for an answer; a worker must never be killed before GERBIL gives up.
timeout = 660
# Time for an in-flight document to finish on shutdown or reload.
graceful_timeout = 120
keepalive = 5

# Each worker loads the model after the fork (create_app starts it): CUDA initialised in the master
# cannot be used in forked children, and a preloaded model would be shared only until touched.
preload_app = False

accesslog = "-"
# gunicorn's default access line, then the request id the answer carries (annotator.service.request_ids)
access_log_format = '%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s" %({x-request-id}o)s'
errorlog = "-"
loglevel = os.environ.get("ENTQA_LOG_LEVEL", "info")


# The variable annotator.service.reloading reads in the workers: their master forwards SIGHUP to them (its pid).
HUP_FORWARDING_VARIABLE = "_ENTQA_MASTER_FORWARDS_HUP"


def when_ready(server: Arbiter) -> None:
    server.log.info("NIF annotator listening on %s with %d worker(s)", ", ".join(server.cfg.bind), server.cfg.workers)
    # SIGHUP means "serve the KB's changes" (annotator.service.reloading): each worker reloads its KB while it goes
    # on linking.
    # gunicorn's master would restart its workers instead, each answering 503 while its model loads again (about
    # 20 s), so it forwards the signal to them (it calls server.handle_<signal> on its main loop). To serve new code or
    # settings, restart the service.
    server.handle_hup = lambda: _forward_hup(server)
    os.environ[HUP_FORWARDING_VARIABLE] = str(server.pid)  # before the workers are forked: they inherit it


def _forward_hup(server: Arbiter) -> None:
    # A worker still importing the app (before create_app sets its handler) ends on SIGHUP, and is started again: it
    # had not loaded its model yet, and its successor loads the KB as it is now.
    workers = sorted(server.WORKERS)
    server.log.info("SIGHUP forwarded to worker(s) %s: each reloads its KB (none is restarted)",
                    ", ".join(map(str, workers)))
    for pid in workers:
        try:
            os.kill(pid, signal.SIGHUP)
        except ProcessLookupError:  # gone since: its successor loads the KB as it is now
            pass


def post_fork(server: Arbiter, worker: Worker) -> None:
    # The app's own log lines (what the linker loads, when it is ready) go to standard error beside gunicorn's,
    # which keeps its own handlers; each names the request it was written for ("-": none).
    from annotator.service.request_ids import install_log_records

    install_log_records()
    logging.basicConfig(level=loglevel.upper(), datefmt="%Y-%m-%d %H:%M:%S %z",
                        format="[%(asctime)s] [%(process)d] [%(levelname)s] [%(request_id)s] %(name)s: %(message)s")


def post_worker_init(worker: Worker) -> None:
    worker.log.info("worker %s answering; its linker loads in the background (GET /health: 503 until it is in)",
                    worker.pid)


def child_exit(server: Arbiter, worker: Worker) -> None:
    # a gone worker's live gauges (waiting documents, memory) leave the sums
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def worker_abort(worker: Worker) -> None:
    worker.log.warning("worker %s aborted: no answer within %d s", worker.pid, worker.cfg.timeout)
