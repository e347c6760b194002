"""Generated blocks of a hand-written Markdown document: the text between ``<!-- NAME:start -->`` and
``<!-- NAME:end -->`` (each marker alone on its line) is replaced, the prose around it kept byte for
byte.  Used by tools/bench_tables.py (docs/performance.md) and the coverage scripts (docs/import.md).
"""
from __future__ import annotations

import re


def markers(name: str) -> tuple[str, str]:
    """The start and end markers of block ``name``."""
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def block_names(doc: str) -> list[str]:
    """The names of the blocks ``doc`` marks, in order."""
    return re.findall(r"^<!-- (\S+):start -->$", doc, flags=re.MULTILINE)


def replace_blocks(doc: str, blocks: dict[str, str]) -> str:
    """``doc`` with the body of each named block replaced by its text (a block not named is kept).
    A ValueError names a block whose markers are missing, repeated or out of order."""
    for name, text in blocks.items():
        start, end = markers(name)
        lines = doc.split("\n")
        starts = [i for i, line in enumerate(lines) if line == start]
        ends = [i for i, line in enumerate(lines) if line == end]
        if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
            raise ValueError(f"block {name!r}: expected one {start} line followed by one {end} line "
                             f"(found {len(starts)} start, {len(ends)} end)")
        body = text.strip("\n").split("\n") if text.strip() else []
        doc = "\n".join(lines[:starts[0] + 1] + body + lines[ends[0]:])
    return doc
