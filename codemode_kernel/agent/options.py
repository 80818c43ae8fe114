"""AgentOptions: the agent's own knobs (budgets, step limit, when the listing turns compact, selection)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["AgentOptions", "ListingStyle"]

ListingStyle = Literal["auto", "stubs", "compact"]
"""How ``execute_python`` lists the tools: typed stubs, the compact grouped listing, or ``auto`` (stubs
until they pass ``max_stub_chars`` or ``max_stub_tools``)."""


@dataclass(frozen=True)
class AgentOptions:
    """Limits that keep a conversation's context small; the defaults suit models with 32k+ contexts.

    Code-mode settings (on or off, excluded tools, the execution timeout) come from the config's
    ``codeMode``; these are about the conversation itself.
    """

    max_steps: int = 20
    """Model requests per ``run()`` before the agent stops with a message."""
    result_budget: int = 8000
    """Characters of one execution's (or classic tool call's) result the model gets back; the rest is cut,
    and kept as an artifact when it was cut."""
    listing: ListingStyle = "auto"
    max_stub_chars: int = 24_000
    """``auto``: above this many characters of stubs, the compact listing is used instead."""
    max_stub_tools: int = 60
    """``auto``: above this many tools, the compact listing is used instead."""
    select_tools: bool = True
    """When ``auto`` turns the listing compact (code mode), first ask a model which tools the request needs
    (``codeMode.selectModel``, else the agent's model): those are described as full stubs, the rest stay
    compact. A failed or garbled answer falls back to the plain compact listing. False: never ask."""
    select_max: int = 12
    """The most tools a selection describes as full stubs (the model's first picks are kept)."""
    max_tokens: int | None = None
    """The most tokens per model answer (None: the provider's default)."""
    instructions: str | None = None
    """Extra text appended to the system prompt (house rules, the user's context)."""

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, not {self.max_steps}")
        if self.result_budget < 200:
            raise ValueError(f"result_budget must be at least 200 characters, not {self.result_budget}")
        if self.select_max < 1:
            raise ValueError(f"select_max must be at least 1, not {self.select_max}")
