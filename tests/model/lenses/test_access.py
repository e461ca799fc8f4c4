from __future__ import annotations

import json
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
from attnlens.model.lenses.registry import _canonical, load
from attnlens.record.errors import ModelNotFoundError
from helpers.tiny import save_tiny_model


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


def test_a_refusal_tells_how_to_allow_a_model_but_not_the_allow_list(tmp_path: Path) -> None:
    secret = tmp_path / "operators" / "private-model"
    env = {"ATTNLENS_SERVER_MODE": "1", "ATTNLENS_ALLOWED_MODELS": f"{secret}, org/private"}
    with pytest.raises(ModelNotAllowedError) as refused:
        AccessPolicy.from_env(env).check("/etc", {"reverse", "sort"})
    message = str(refused.value)
    assert message.startswith("model '/etc' is not allowed on this server: it loads its bundled")
    assert "(reverse, sort)" in message and "ATTNLENS_ALLOWED_MODELS" in message
    assert str(tmp_path) not in message and "private" not in message


@pytest.mark.parametrize("name", ["reverse\x00", "reverse\n", "/tmp\x00/x", "org/m\x1b[2J"])
def test_a_name_with_a_control_character_is_refused_in_one_line(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"ATTNLENS_SERVER_MODE": "1", "ATTNLENS_ALLOWED_MODELS": "/srv/models/m1"}
    with pytest.raises(ModelNotAllowedError, match="holds no control characters") as refused:
        AccessPolicy.from_env(env).check(name, {"reverse"})
    assert len(str(refused.value).splitlines()) == 1 and repr(name) in str(refused.value)
    monkeypatch.delenv("ATTNLENS_SERVER_MODE", raising=False)  # and on one's own machine
    with pytest.raises(ModelNotFoundError, match="holds no control characters") as missing:
        load(name)
    assert repr(name) in str(missing.value)


def test_a_folder_through_dot_dot_loads_under_its_own_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = save_tiny_model(tmp_path / "m1")
    meta = json.loads((folder / "config.json").read_text())
    del meta["name"]  # a folder without a name of its own is named after the folder
    (folder / "config.json").write_text(json.dumps(meta))
    (folder / "sub").mkdir()
    monkeypatch.setenv("ATTNLENS_SERVER_MODE", "1")
    monkeypatch.setenv("ATTNLENS_ALLOWED_MODELS", str(folder))
    assert load(str(folder / "sub" / "..")).name == "m1"
    monkeypatch.chdir(folder)
    monkeypatch.delenv("ATTNLENS_SERVER_MODE")
    assert load(".").name == "m1"
    typed = str(folder / "sub" / "..")  # a Hugging Face folder is named by its path
    assert _canonical(typed, Path(typed)) == str(folder) and _canonical(".", Path(".")) == str(
        folder
    )
    assert _canonical("models/bert", Path("models/bert")) == "models/bert"  # as typed


def test_budget_refuses_above_the_limit() -> None:
    assert trace_bytes(2, 4, 10, 5) == 2 * 4 * (100 + 25 + 50) * 4
    assert decode_bytes(1, 1, 3, 2, 4) == 2 * 4 * 2 * 5 * 4  # weights and norms
    env = {"ATTNLENS_MAX_RECORD_MB": "1"}
    assert budget_bytes(env) == 2**20
    check_budget(2**20, "trace", env=env)
    with pytest.raises(RecordTooLargeError, match=r"above the limit of 1 MB.*; fewer beams"):
        check_budget(2**20 + 1, "decode", "fewer beams", env=env)
    assert budget_bytes({}) == budget_bytes({"ATTNLENS_MAX_RECORD_MB": " "}) == 512 * 2**20
