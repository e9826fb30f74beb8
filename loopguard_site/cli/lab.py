"""`loopguard lab`: the lab web app on this machine, in one command.

Migrates the database, optionally loads the demo data, then serves the ASGI
app (pages, API, WebSockets, static files) with Daphne. In the embedded mode
(no REDIS_URL) it also runs the Celery worker in a thread of this process; in
the full mode workers are separate `celery -A loopguard_site worker`
processes. Ctrl-C (SIGINT) or SIGTERM stops everything it started.
"""

from __future__ import annotations

import argparse
import os
import signal

HELP = "run the lab web app (Daphne, and the Celery worker when embedded); --demo loads demo sessions"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--demo", action="store_true", help="load the demo sessions and print a demo admin's API token")
    parser.add_argument("--port", type=int, default=8000, help="TCP port (default 8000; 0 picks a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")


def run(args: argparse.Namespace) -> int:
    # A shell starts background jobs with SIGINT ignored, and Twisted then
    # leaves it so: Ctrl-C (or `kill -INT`) must stop the lab however started.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # Daphne installs Twisted's asyncio reactor on import; it must come before
    # anything else imports Twisted.
    from daphne.endpoints import build_endpoint_description_strings
    from daphne.server import Server
    from twisted.internet import reactor

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "loopguard_site.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    if args.demo:
        from loopguard_site.demo import DEMO_PROFILES, DEMO_USERNAME, demo_load

        demo = demo_load()
        print(f"Demo: {demo.loaded} sessions loaded, {demo.present} already there")
        print(f"Admin login: {DEMO_USERNAME} / {demo.password}")
        print(f"API token: {demo.token}", flush=True)
        if demo.replay_job is not None:
            print(f"Demo: replay job #{demo.replay_job} runs them through {', '.join(DEMO_PROFILES)}", flush=True)

    from django.db import connections

    connections.close_all()  # the migration's: the serving threads open their own (LOOPGUARD_DB_CONNECTIONS)
    from loopguard_site.asgi import application

    worker = None
    if settings.LOOPGUARD_EMBEDDED:
        from loopguard_site.celery import app as celery_app
        from loopguard_site.embedded_worker import EmbeddedWorker

        worker = EmbeddedWorker(celery_app, threads=settings.LOOPGUARD_EMBEDDED_WORKER_THREADS)
        worker.start()
        print(f"Embedded mode: Celery worker thread ({worker.threads} threads), in-memory channel layer")
    else:
        print("Full mode: Redis broker and channels; start workers with `celery -A loopguard_site worker`")

    from loopguard_site.live.sweeper import StalledSweeper

    sweeper = StalledSweeper(settings.LOOPGUARD_LIVE_SWEEP_SECONDS)  # marks silent live sessions stalled
    sweeper.start()
    # Daphne cuts a message past its own limit (1 MiB by default) with code
    # 1009 and no word why; its limit is set above ours, so that a message
    # past LOOPGUARD_WS_MAX_MESSAGE_KB (up to twice it) reaches
    # MessageSizeLimit, which says so before closing with 1009.
    socket_bytes = 2 * settings.LOOPGUARD_WS_MAX_MESSAGE_BYTES
    from loopguard_site import daphne_limits

    daphne_limits.install()  # request bodies judged before they are read; close code 1009
    server = Server(
        application,
        websocket_max_message_size=socket_bytes,
        websocket_max_frame_size=socket_bytes,
        # autobahn drops a socket not accepted within its handshake timeout
        # (Daphne's default 5 s) although Daphne waits 20 s for the accept:
        # in a connect storm the accepts that came after 5 s were work thrown
        # away, and the retries made more of it
        websocket_handshake_timeout=20,
        endpoints=build_endpoint_description_strings(host=args.host, port=args.port),
        signal_handlers=True,  # SIGINT / SIGTERM stop the reactor, then we stop the worker
    )
    # Announce once the reactor runs: its SIGINT/SIGTERM handlers are in place
    # by then, so whoever reads the URL can stop us at once.
    server.ready_callable = lambda: reactor.callWhenRunning(_announce, server)
    try:
        server.run()
    finally:
        sweeper.stop()
        if worker is not None:
            worker.stop()
    if not server.listening_addresses:
        print(f"LoopGuard lab: could not listen on {args.host}:{args.port}")
        return 1
    print("LoopGuard lab stopped")
    return 0


def _announce(server) -> None:
    # Daphne listens (synchronously, for TCP) before the reactor runs, so the
    # address, and the port picked for --port 0, is known here.
    for host, port in server.listening_addresses:
        shown = f"[{host}]" if ":" in host else host
        print(f"LoopGuard lab: http://{shown}:{port}/", flush=True)
