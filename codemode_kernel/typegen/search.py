"""Rank tools for a few words of a request: what ``search_tools(query)`` in a program answers.

With a hundred tools a model cannot read every stub; it asks ``search_tools("list pull requests")`` and reads
the few that fit. The ranking is plain word matching, standard library only (the worker imports it), so it
is fast, offline and predictable:

- the query and each tool are cut into words: ``snake_case``, ``camelCase``, ``kebab-case`` and spaces all
  split (``perPage`` gives ``per`` and ``page``), words are lowercased, a plural ``s`` is dropped, and a few
  filler words of the query (``a``, ``the``, ``for``...) are ignored when it has others;
- a word found in the tool's name weighs most (10), in an argument's name next (3), in the description
  least (1); a query word that starts a longer word (``repo`` in ``repository``) counts half;
- each query word is weighed by how rare it is among the tools listed (``owner`` is in nearly every GitHub
  tool and says little), and a tool whose name holds every query word gets a bonus;
- tools that match nothing are left out; ties keep the order of the tools' function names.

``limit`` is how many tools come back: ``DEFAULT_LIMIT`` (10) unless asked, at most ``MAX_LIMIT`` (50);
an empty query lists the first tools by name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .model import ToolModel

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "ToolHit", "rank_tools", "words"]

DEFAULT_LIMIT = 10
"""Tools ``search_tools`` returns unless asked for another number."""
MAX_LIMIT = 50
"""The most tools one search returns: a larger ``limit`` is cut to this."""

_NAME_WEIGHT = 10.0
_ARGUMENT_WEIGHT = 3.0
_DESCRIPTION_WEIGHT = 1.0
_PREFIX_FACTOR = 0.5
_WHOLE_NAME_BONUS = 8.0
_MIN_PREFIX = 3

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[A-Za-z0-9]+")
_FILLER = frozenset(
    (
        *("a", "an", "the", "for", "of", "to", "in", "on", "at", "by", "and", "or", "with", "from", "into"),
        *("my", "me", "i", "we", "our", "your", "us", "it", "its", "this", "that", "these", "those", "all"),
        *("some", "any", "please", "can", "could", "would", "should", "will", "do", "does", "is", "are"),
        *("be", "get"),
    )
)
"""Words of a query that say nothing about which tool fits (unless the query has no other words). ``get``
is among them: nearly every request "gets" something, while tools named ``get_*`` are found by what they
get."""


@dataclass(frozen=True)
class ToolHit:
    """One tool a search found, with its score (higher is better; only the order means something)."""

    model: ToolModel
    score: float


def words(text: str) -> list[str]:
    """The words of ``text`` as the ranking compares them: split, lowercased, singular."""
    out: list[str] = []
    for chunk in _WORD.findall(text):
        for part in _CAMEL.split(chunk):
            if part:
                out.append(_singular(part.lower()))
    return out


def _singular(word: str) -> str:
    """Drop a plural ending, the same way for the query and the tools (so both sides agree)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@dataclass(frozen=True)
class _Document:
    model: ToolModel
    name: frozenset[str]
    arguments: frozenset[str]
    description: frozenset[str]

    @property
    def every_word(self) -> frozenset[str]:
        return self.name | self.arguments | self.description


def _document(model: ToolModel) -> _Document:
    name = words(model.function_name) + words(model.spec.name)
    arguments: list[str] = []
    for param in model.params:
        arguments += words(param.name) + words(param.wire_name)
    description = words(model.spec.description) + words(model.spec.title or "")
    return _Document(model, frozenset(name), frozenset(arguments), frozenset(description))


def _match(term: str, field: frozenset[str]) -> float:
    """1 for the word itself, half for a longer word it begins (``repo`` in ``repository``), else 0."""
    if term in field:
        return 1.0
    if len(term) >= _MIN_PREFIX and any(w.startswith(term) for w in field):
        return _PREFIX_FACTOR
    return 0.0


def rank_tools(models: Sequence[ToolModel], query: str, limit: int = DEFAULT_LIMIT) -> list[ToolHit]:
    """The tools of ``models`` that match ``query``, best first, at most ``limit`` (capped at ``MAX_LIMIT``).

    Raises:
        ValueError: ``limit`` is below 1.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    limit = min(limit, MAX_LIMIT)
    ordered = sorted(models, key=lambda m: m.function_name)
    every = list(dict.fromkeys(words(query)))
    terms = [w for w in every if w not in _FILLER] or every
    if not terms:
        return [ToolHit(model, 0.0) for model in ordered[:limit]]
    documents = [_document(model) for model in ordered]
    weights = {term: _rarity(term, documents) for term in terms}
    hits = []
    for document in documents:
        score = 0.0
        whole_name = True
        for term in terms:
            in_name = _match(term, document.name)
            whole_name = whole_name and in_name == 1.0
            score += weights[term] * (
                _NAME_WEIGHT * in_name
                + _ARGUMENT_WEIGHT * _match(term, document.arguments)
                + _DESCRIPTION_WEIGHT * _match(term, document.description)
            )
        if score > 0:
            if whole_name:
                score += _WHOLE_NAME_BONUS * sum(weights.values())
            hits.append(ToolHit(document.model, score))
    hits.sort(key=lambda hit: -hit.score)  # stable: ties keep the name order
    return hits[:limit]


def _rarity(term: str, documents: Iterable[_Document]) -> float:
    """How much a word tells tools apart: high for a word few tools have, low for one nearly all have."""
    documents = list(documents)
    having = sum(1 for d in documents if _match(term, d.every_word) > 0)
    return math.log(1 + len(documents) / (1 + having))
