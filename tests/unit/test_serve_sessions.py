"""Which session a client's ``session`` name reaches: never another client's, never past the limit."""

from __future__ import annotations

import pytest

from codemode_kernel.core.errors import SessionLimitError
from codemode_kernel.serve.sessions import SessionTable


def test_a_scoped_name_is_kept_and_scoped_per_client() -> None:
    alive: list[str] = []
    table = SessionTable(4, lambda: alive)
    first = table.resolve("stdio", "work")
    assert (first.name, first.new) == ("work", True)
    alive.append(first.key)
    again = table.resolve("stdio", "work")
    assert (again.key, again.new) == (first.key, False)
    other = table.resolve("http:abc", "work")
    assert other.key != first.key and other.new


def test_without_scope_a_new_session_gets_an_unguessable_name() -> None:
    alive: list[str] = []
    table = SessionTable(4, lambda: alive)
    minted = table.resolve(None, "calc")
    assert minted.new and minted.name.startswith("calc~") and minted.key == minted.name
    alive.append(minted.key)
    assert table.resolve(None, minted.name).new is False
    assert table.resolve(None, "calc").name != minted.name  # the bare name opens a new one
    scoped = table.resolve("http:abc", "x~y")
    alive.append(scoped.key)
    assert table.resolve(None, scoped.key).new  # a scoped session is never reached without its scope


def test_past_the_limit_a_new_session_is_refused_and_an_old_one_still_runs() -> None:
    alive = ["stdio\x00a"]
    table = SessionTable(1, lambda: alive)
    assert table.resolve("stdio", "a").new is False
    with pytest.raises(SessionLimitError, match=r"maxSessions is 1"):
        table.resolve("stdio", "b")
    alive.clear()  # the old one expired
    assert table.resolve("stdio", "b").new
