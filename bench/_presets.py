"""The sample counts a benchmark takes on its command line: each with a full and a ``--quick`` default."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

__all__ = ["add_counts", "chosen_counts"]


def add_counts(
    parser: argparse.ArgumentParser,
    counts: Mapping[str, str],
    full: Mapping[str, int],
    quick: Mapping[str, int],
) -> None:
    """One ``--name`` option per count (``counts`` maps its name to what it counts), saying both defaults."""
    for name, text in counts.items():
        parser.add_argument(
            "--" + name.replace("_", "-"),
            type=int,
            help=f"{text} (default {full[name]}; --quick: {quick[name]})",
        )


def chosen_counts(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    counts: Mapping[str, str],
    full: Mapping[str, int],
    quick: Mapping[str, int],
) -> dict[str, Any]:
    """``{"quick": ..., name: count}``: each count as given, else its preset's; one below 1 is an error."""
    preset = quick if args.quick else full
    options: dict[str, Any] = {"quick": args.quick}
    for name in counts:
        given = getattr(args, name)
        options[name] = given if given is not None else preset[name]
        if options[name] < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return options
