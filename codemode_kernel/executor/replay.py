"""Replay: answer a program's tool calls from a recorded list instead of the servers.

This is the stateless design of the tool-calls-as-code proof of concept: run a program, record its calls;
run it again with the record and no server is touched. A call is matched by (tool, canonical JSON of its
arguments, n-th occurrence), so parallel calls replay in any order. A call missing from the record either
fails ("replay diverged") or, in pending mode, stops the run with status ``pending`` listing every call the
program was waiting on, so the tool owner can run them and resume with the longer record.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["REPLAYED", "ReplayBook", "call_key", "describe_call"]

REPLAYED = "replayed from the record; no server was called"
"""The warning of a call answered from the record (its result is the record's, not a server's)."""


def call_key(tool: str, arguments: Mapping[str, Any]) -> tuple[str, str]:
    """The identity of a call: the tool and its arguments as canonical JSON (sorted keys, compact)."""
    return tool, json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class ReplayBook:
    """The recorded calls of an earlier run, consumed in order per identical call."""

    def __init__(self, calls: Iterable[Mapping[str, Any]]) -> None:
        self.calls: list[Mapping[str, Any]] = list(calls)
        """The record as given, in order."""
        self._answers: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
        self._used: dict[tuple[str, str], int] = defaultdict(int)
        self._by_seq: dict[int, Mapping[str, Any]] = {}
        self._consumed: set[int] = set()
        for index, call in enumerate(self.calls):
            if not isinstance(call, Mapping) or not isinstance(call.get("tool"), str):
                raise ValueError(f"replay record {index} is not a tool call with a 'tool' name")
            arguments = call.get("arguments") or {}
            if not isinstance(arguments, Mapping):
                raise ValueError(f"replay record {index} ({call['tool']}): 'arguments' must be an object")
            if call.get("status") in ("running", "cancelled", "pending"):
                continue  # never answered: not a recorded result
            self._answers[call_key(call["tool"], arguments)].append(call)
            if isinstance(call.get("seq"), int):
                self._by_seq.setdefault(call["seq"], call)

    def answer(self, tool: str, arguments: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The recorded call for the n-th identical call, or None when the record has no such answer."""
        key = call_key(tool, arguments)
        index = self._used[key]
        recorded = self._answers.get(key, [])
        if index >= len(recorded):
            return None
        self._used[key] = index + 1
        self._consumed.add(id(recorded[index]))
        return recorded[index]

    def conflict(self, seq: int | None, tool: str, arguments: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The recorded call numbered ``seq`` when the program's call ``seq`` is a different one.

        Called for a call the record does not answer: if the record has an unused answer at that place in
        the program, the program asked something else there than when it was recorded (it is not
        deterministic), and answering from the record any further would answer a different question.
        """
        recorded = self._by_seq.get(seq) if seq is not None else None
        if recorded is None or id(recorded) in self._consumed:
            return None
        return (
            recorded
            if call_key(recorded["tool"], recorded.get("arguments") or {}) != call_key(tool, arguments)
            else None
        )


def describe_call(tool: str, arguments: Mapping[str, Any]) -> str:
    """``get_weather(city='Oslo', unit='celsius')``, for messages."""
    inside = ", ".join(f"{name}={value!r}" for name, value in arguments.items())
    return f"{tool}({inside})"
