"""`attnlens serve`: the app, started as Streamlit with the server's settings
(docs/deploying.md)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attnlens


def add_serve_parser(sub: Any) -> None:
    serve = sub.add_parser("serve", help="start the app in the browser")
    serve.add_argument("--port", type=int, default=8501)
    serve.add_argument(
        "--host",
        metavar="ADDRESS",
        help="the address to listen on: 0.0.0.0 (the default) serves every network this "
        "machine is on, so students' devices can join a class; 127.0.0.1 this machine only",
    )
    serve.add_argument("--model", help="model to open first (default: reverse)")
    serve.add_argument(
        "--class-store",
        metavar="URL",
        help="where live classes are kept: sqlite:///PATH (default: a file in "
        "~/.local/share/attnlens) or redis://HOST:PORT/DB for several replicas "
        "(or set ATTNLENS_CLASS_STORE)",
    )
    serve.add_argument(
        "--decks",
        metavar="DIR",
        action="append",
        type=Path,
        help="a folder of lecture decks (*.deck) besides the bundled ones; may be repeated",
    )


HOST_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")  # one part of a name

# Streamlit's options for `attnlens serve` (the bench serves its bare reference page with the
# same). After every rerun Streamlit would stat the file of every loaded module (torch's
# thousands) and force a full garbage collection, which walked the ~260k objects of torch and
# the models: with a class following a teacher that was most of the server's CPU
# (bench/class_capacity.py), and 110-170 ms of every Explore keystroke (bench/breakdown.py).
STREAMLIT_OPTIONS = (
    "--server.headless",
    "true",
    "--browser.gatherUsageStats",
    "false",
    "--server.fileWatcherType",
    "none",
    "--runner.postScriptGC",
    "false",
    "--client.toolbarMode",  # a class sees Settings (the theme), not Deploy or Clear cache
    "viewer",
)

# Allocator settings `attnlens serve` gives the server unless the environment sets them
# already, so that memory a closed tab freed goes back to the system (docs/deploying.md).
# glibc raises its mmap threshold to each large block freed (up to 32 MiB: a trace's
# attention at 510 tokens is 12 MB a layer) and then keeps up to twice that free at the top of
# every thread's arena, where malloc_trim does not reach: after 4 sessions that downloaded, the
# arenas of its threads kept 20-24 MB each. A fixed threshold keeps glibc trimming the top
# above 128 KiB; a trace is no slower. pyarrow (Streamlit's tables) allocates from its own
# mimalloc, which kept 34 MB of pages of finished script threads; the system allocator is
# trimmed like the rest.
SERVER_ENVIRONMENT = {
    "MALLOC_MMAP_THRESHOLD_": str(32 * 2**20),  # the dynamic threshold's own ceiling
    "ARROW_DEFAULT_MEMORY_POOL": "system",
}


def server_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The server's environment: env, with SERVER_ENVIRONMENT's settings where env has none."""
    return {**SERVER_ENVIRONMENT, **env}


def cmd_serve(args: argparse.Namespace) -> None:
    if not 1 <= args.port <= 65535:
        raise attnlens.InputError(f"--port must be between 1 and 65535, got {args.port}")
    listen = listen_address(args.host) if args.host else None
    prepare_teaching(args)
    # served.py: the app (web/main.py) and the route students' pages follow their class by
    script = Path(__file__).parents[1] / "web" / "served.py"
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(script),
        "--server.port",
        str(args.port),
        *STREAMLIT_OPTIONS,
    ]
    if listen is not None:  # else Streamlit's default: every network
        command += ["--server.address", listen]
    if args.model:
        command += ["--", "--model", args.model]
    # streamlit takes over this process (stopping it stops all) and glibc reads its settings
    os.execve(sys.executable, command, server_environment(os.environ))


def listen_address(host: str) -> str:
    """--host checked: an IP address or a host name (Streamlit's server.address)."""
    text = host.strip()
    try:
        return str(ipaddress.ip_address(text.strip("[]")))
    except ValueError:
        pass
    labels = text.removesuffix(".").split(".")
    if len(text) > 253 or not all(HOST_LABEL.fullmatch(label) for label in labels):
        raise attnlens.InputError(
            f"--host must be an IP address (0.0.0.0 for every network, 127.0.0.1 for this "
            f"machine only) or a host name, got {host!r}"
        )
    return text


def prepare_teaching(args: argparse.Namespace) -> None:
    """Check the class store answers and read the decks before the app starts: a store that
    cannot be reached stops here with its reason; a bad deck is named, and the rest serve."""
    from attnlens.app.classroom.stores import ENV, open_store, store_url
    from attnlens.app.teaching.deck import DECKS_ENV, read_library

    for folder in args.decks or ():
        if not folder.is_dir():
            raise attnlens.InputError(f"--decks {folder}: no such folder")
    if args.class_store:
        os.environ[ENV] = args.class_store
    store = open_store(store_url())
    try:
        store.ping()
    finally:
        store.close()
    if args.decks:
        os.environ[DECKS_ENV] = os.pathsep.join(str(f.resolve()) for f in args.decks)
    library = read_library()
    for message in library.errors.values():
        print(f"attnlens: warning: {' '.join(message.split())}", file=sys.stderr)
