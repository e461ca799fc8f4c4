from __future__ import annotations

from pathlib import Path

import pytest

from attnlens.model.budget import (
    RecordTooLargeError,
    budget_bytes,
    check_budget,
    decode_bytes,
    trace_bytes,
)
from attnlens.model.lenses.access import AccessPolicy, ModelNotAllowedError


def test_local_use_allows_anything() -> None:
    AccessPolicy.from_env({}).check("/etc", {"reverse"})


def test_server_mode_allows_bundled_and_listed_only(tmp_path: Path) -> None:
    allowed = tmp_path / "mine"
    allowed.mkdir()
    env = {"ATTNLENS_SERVER_MODE": "1", "ATTNLENS_ALLOWED_MODELS": f"{allowed}, org/model"}
    policy = AccessPolicy.from_env(env)
    policy.check("reverse", {"reverse"})
    policy.check("org/model", {"reverse"})
    policy.check(str(tmp_path / "other" / ".." / "mine"), {"reverse"})
    for bad in ("/etc", str(tmp_path), "org/other", "../../etc"):
        with pytest.raises(ModelNotAllowedError, match="not allowed on this server"):
            policy.check(bad, {"reverse"})


def test_budget_refuses_above_the_limit() -> None:
    assert trace_bytes(2, 4, 10, 5) == 2 * 4 * (100 + 25 + 50) * 4
    assert decode_bytes(1, 1, 3, 2, 4) == 4 * 2 * 5 * 4
    env = {"ATTNLENS_MAX_RECORD_MB": "1"}
    assert budget_bytes(env) == 2**20
    check_budget(2**20, "trace", env=env)
    with pytest.raises(RecordTooLargeError, match=r"above the limit of 1 MB.*; fewer beams"):
        check_budget(2**20 + 1, "decode", "fewer beams", env=env)
    assert budget_bytes({}) == budget_bytes({"ATTNLENS_MAX_RECORD_MB": " "}) == 512 * 2**20
