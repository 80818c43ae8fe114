"""A spreadsheet-like MCP server whose results have fields named like dict methods, a keyword and a dunder.

``read_range`` answers with structured content whose fields are ``values``, ``items``, ``keys``, ``get``,
``copy``, ``update``, ``pop``, ``count``, ``index``, ``class`` and ``__init__``, beside ordinary ones
(``range``, ``next_range``), as real servers do (a spreadsheet's ``read_range(...).values``). Its
description is hard-wrapped the way many servers write theirs, so a listing that takes the first line
cuts it mid-sentence.
"""

from __future__ import annotations

from typing import TypedDict

from mcp.server import MCPServer

server = MCPServer("sheet")

SHEET = [["name", "qty"], ["apple", "3"], ["pear", "5"]]

# The functional form: `class` and `__init__` cannot be written as fields of a class body.
ReadRange = TypedDict(
    "ReadRange",
    {
        "range": str,
        "next_range": str,
        "values": list[list[str]],
        "items": list[str],
        "keys": list[str],
        "get": str,
        "copy": str,
        "update": str,
        "pop": int,
        "count": int,
        "index": int,
        "class": str,
        "__init__": str,
    },
)


# Hard-wrapped the way many servers write theirs: the first line ends mid-sentence.
DESCRIPTION = """Read the cells of a range of the demo sheet as strings, row by row; read the next page if
`next_range` is not empty. The sheet has two columns, e.g. name and qty.

Rows come back in sheet order.
"""


@server.tool(description=DESCRIPTION)
def read_range(range: str = "A1:B3") -> ReadRange:
    return {
        "range": range,
        "next_range": "",
        "values": SHEET,
        "items": [row[0] for row in SHEET[1:]],
        "keys": SHEET[0],
        "get": "the get field",
        "copy": "the copy field",
        "update": "2026-11-27",
        "pop": 2,
        "count": len(SHEET),
        "index": 0,
        "class": "fruit",
        "__init__": "the __init__ field",
    }


if __name__ == "__main__":
    server.run("stdio")
