"""The join link students open: ATTNLENS_PUBLIC_URL first, the address the teacher reached the
server by, this machine's network address when the server listens beyond loopback, and a
warning with the command that serves the class when it listens on loopback only."""

from __future__ import annotations

import pytest

from attnlens.app.classroom.join_link import (
    JoinBase,
    is_loopback,
    join_base,
    lan_address,
    page_base,
    public_url,
)

LAN = "192.168.1.23"


def on_lan() -> str | None:
    return LAN


def no_network() -> str | None:
    return None


def test_a_loopback_only_server_warns_with_the_exact_command() -> None:
    for listen in ("127.0.0.1", "localhost", "::1"):
        base = join_base("http://127.0.0.1:8600/lecture", listen, 8600, lan=on_lan)
        assert not base.reachable
        assert base.command == "attnlens serve --host 0.0.0.0 --port 8600"
        assert base.warning is not None and f"listens on {listen} only" in base.warning
        assert base.url == "http://127.0.0.1:8600"  # still shown: it opens on this machine


@pytest.mark.parametrize("listen", [None, "", "0.0.0.0", "::"])
def test_a_server_on_every_network_sends_students_to_this_machines_lan_address(
    listen: str | None,
) -> None:
    for page in ("http://127.0.0.1:8600/", "http://localhost:8600/lecture?page=lecture"):
        assert join_base(page, listen, 8600, lan=on_lan) == JoinBase(f"http://{LAN}:8600")


def test_the_servers_port_is_used_not_a_tunnels() -> None:
    """A teacher on an SSH tunnel (localhost:9000 to the server's 8501): the room's port."""
    base = join_base("http://localhost:9000/", "0.0.0.0", 8501, lan=on_lan)
    assert base.url == f"http://{LAN}:8501"


def test_an_ipv6_lan_address_is_bracketed() -> None:
    base = join_base("http://[::1]:8501/", "::", 8501, lan=lambda: "fd00::5")
    assert base.url == "http://[fd00::5]:8501"


def test_a_server_on_one_address_sends_students_there() -> None:
    assert join_base("http://127.0.0.1:8501/", "10.0.0.7", 8501, lan=on_lan).url == (
        "http://10.0.0.7:8501"
    )


def test_a_teacher_who_reached_the_server_by_a_network_address_shares_that_one() -> None:
    base = join_base("https://class.example.edu/lecture", "0.0.0.0", 8501, lan=on_lan)
    assert base == JoinBase("https://class.example.edu")
    assert join_base(f"http://{LAN}:8501/", None, 8501, lan=no_network).url == (
        f"http://{LAN}:8501"
    )


def test_no_network_at_all_is_said_and_not_linked_as_reachable() -> None:
    base = join_base("http://127.0.0.1:8501/", None, 8501, lan=no_network)
    assert not base.reachable and base.warning is not None
    assert "no network address" in base.warning and "ATTNLENS_PUBLIC_URL" in base.warning


def test_attnlens_public_url_wins_over_every_address() -> None:
    for listen in ("127.0.0.1", "0.0.0.0", None):
        base = join_base("http://127.0.0.1:8501/", listen, 8501, "https://attn.example.edu/",
                         lan=on_lan)  # fmt: skip
        assert base == JoinBase("https://attn.example.edu")
    assert join_base("http://x:1/", None, 1, " http://h:8080/app ").url == "http://h:8080/app"


@pytest.mark.parametrize(
    "bad",
    ["attn.example.edu", "ftp://attn.example.edu", "https://", "http://h:99999",
     "http://h/?class=X", "http://h/#x", "http://h\u2060:80", "http://a b"],
)  # fmt: skip
def test_a_bad_public_url_is_named_and_the_servers_own_address_used(bad: str) -> None:
    with pytest.raises(ValueError, match=r"ATTNLENS_PUBLIC_URL=.* is not an address students can"):
        public_url(bad)
    base = join_base("http://127.0.0.1:8501/", "0.0.0.0", 8501, bad, lan=on_lan)
    assert base.url == f"http://{LAN}:8501" and base.reachable
    assert base.warning is not None and repr(bad) in base.warning


def test_a_bad_public_url_and_a_loopback_server_say_both() -> None:
    base = join_base("http://127.0.0.1:8501/", "127.0.0.1", 8501, "nonsense", lan=on_lan)
    assert base.warning is not None and "'nonsense'" in base.warning
    assert "listens on 127.0.0.1 only" in base.warning and not base.reachable


def test_loopback_names() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "LocalHost",
                                 "app.localhost"]))  # fmt: skip
    assert not any(map(is_loopback, ["0.0.0.0", "192.168.1.2", "example.edu", "", "::"]))


def test_the_page_base_drops_the_lecture_path_and_the_query() -> None:
    assert page_base("http://h:1/lecture?page=lecture&class=X") == "http://h:1"
    assert page_base("https://h/attn/lecture") == "https://h/attn"


def test_the_lan_address_is_a_real_non_loopback_address_or_none() -> None:
    found = lan_address()
    assert found is None or not is_loopback(found)
