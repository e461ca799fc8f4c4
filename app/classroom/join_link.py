"""The address students open to join a class, or why there is none they can open
(docs/teaching.md#a-live-class). No Streamlit here: the page passes in what it knows.

The teacher's browser is often on `http://127.0.0.1:PORT` or `localhost`, the machine itself:
a link made from that address opens nothing on a student's phone. So the link is, in order:
ATTNLENS_PUBLIC_URL when set (a proxy, a name the room knows); the address the teacher's browser
reached the server by, when that is not the machine's own loopback; else, when the server listens
beyond loopback, this machine's address on its network; and when it listens on loopback only,
no link works for anyone else, and the teacher is told the command that serves the class.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

PUBLIC_URL_ENV = "ATTNLENS_PUBLIC_URL"
ANY_ADDRESS = ("", "0.0.0.0", "::")  # listening on every network the machine is on
LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")
# Documentation addresses (RFC 5737, RFC 3849): a UDP socket "connected" to one sends nothing,
# but the system picks the address it would send from, the machine's address on its network.
PROBES = ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1"))


@dataclass(frozen=True)
class JoinBase:
    """Where students open the app (no path, no trailing slash), and what the teacher must
    know first: why students cannot open it, and the command that would let them."""

    url: str
    warning: str | None = None
    command: str | None = None
    reachable: bool = True  # whether a student's device can open url, as far as we can tell


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only (127.0.0.0/8, ::1, localhost)."""
    name = host.strip("[]").lower().rstrip(".")
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def public_url(value: str) -> str:
    """ATTNLENS_PUBLIC_URL checked: an http(s) address with a host, no query or fragment, no
    spaces or invisible characters; a ValueError that names the value otherwise."""
    text = value.strip()
    parts = urlsplit(text)
    try:
        port_ok = parts.port is None or parts.port > 0
    except ValueError:  # a port that is not a number from 0 to 65535
        port_ok = False
    printable = all(c.isprintable() and not c.isspace() for c in text)
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or not port_ok
        or parts.query
        or parts.fragment
        or not printable
    ):
        raise ValueError(
            f"{PUBLIC_URL_ENV}={value!r} is not an address students can open: it must be "
            "http:// or https:// and a host (and port, if any), with no ?query or #fragment, "
            "e.g. https://attnlens.example.edu. The join link uses this server's own address "
            "until it is fixed."
        )
    return text.rstrip("/")


def lan_address() -> str | None:
    """This machine's address on its network (the one it would send from), None without one."""
    for family, probe in PROBES:
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as sock:
                sock.connect((probe, 9))
                host = str(sock.getsockname()[0])
        except OSError:
            continue
        if not is_loopback(host) and not ipaddress.ip_address(host.split("%")[0]).is_unspecified:
            return host
    return None


def page_base(page_url: str) -> str:
    """The app's address from the page's own (the lecture page's path dropped)."""
    parts = urlsplit(page_url)
    segments = [s for s in parts.path.split("/") if s]
    if segments and segments[-1] == "lecture":
        segments = segments[:-1]
    path = "/".join(["", *segments])
    return urlunsplit((parts.scheme, parts.netloc, path, "", "")).rstrip("/")


def join_base(
    page_url: str,
    listen: str | None,
    port: int,
    public: str | None = None,
    lan: Callable[[], str | None] = lan_address,
) -> JoinBase:
    """Where students open this server: `page_url` is the address the teacher's browser is on,
    `listen` and `port` the server's (Streamlit's server.address, None or "" for every network),
    `public` ATTNLENS_PUBLIC_URL's value, `lan` finds this machine's network address."""
    problem: str | None = None
    if public and public.strip():
        try:
            return JoinBase(public_url(public))
        except ValueError as err:
            problem = str(err)
    found = _found(page_url, (listen or "").strip(), port, lan)
    if problem is None:
        return found
    warning = problem if found.warning is None else f"{problem}\n\n{found.warning}"
    return JoinBase(found.url, warning, found.command, found.reachable)


def _found(page_url: str, listen: str, port: int, lan: Callable[[], str | None]) -> JoinBase:
    """The join base from the server's own addresses (no ATTNLENS_PUBLIC_URL)."""
    base = page_base(page_url)
    parts = urlsplit(base)
    if parts.hostname and not is_loopback(parts.hostname):
        return JoinBase(base)  # the teacher reached it by a network's address: so can students
    command = f"attnlens serve --host 0.0.0.0 --port {port}"
    if listen and listen not in ANY_ADDRESS and is_loopback(listen):
        return JoinBase(
            base,
            f"This server listens on {listen} only: no student's phone or laptop can open this "
            "link, only this machine. Stop it and start it again so that it serves the room's "
            f"network (with the same --model and other options as now), then reload this page:",
            command,
            reachable=False,
        )
    host = lan() if listen in ANY_ADDRESS else listen
    if host is None:
        return JoinBase(
            base,
            "This machine has no network address besides its own (127.0.0.1): no student can "
            "open this link. Connect it to the room's network (Wi-Fi or a cable) and reload "
            f"this page; or set {PUBLIC_URL_ENV} to the address students open.",
            reachable=False,
        )
    shown = f"[{host}]" if ":" in host else host
    return JoinBase(urlunsplit((parts.scheme or "http", f"{shown}:{port}", parts.path, "", "")))
