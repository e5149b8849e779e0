"""Word-level diffs of a reviewer's edit against the original output, for display.

Pure: no Django, no ORM. The texts are cut into words and the whitespace between them, so
that the equal and deleted segments joined give back the original exactly and the equal
and inserted ones the edit: line breaks and indentation survive into the page.
"""

from __future__ import annotations

import difflib
import re
from typing import Literal

Op = Literal["equal", "insert", "delete"]
Segment = tuple[Op, str]

_TOKEN = re.compile(r"\s+|\S+")


def word_diff(original: str, edited: str) -> list[Segment]:
    """The edit as ``(op, text)`` segments, ``op`` one of equal, insert, delete.

    A changed run is its delete followed by its insert. Whitespace that the two texts share
    only between two changes is folded into them, so that a rewritten sentence reads as one
    change rather than a confetti of common spaces.
    """
    old, new = _TOKEN.findall(original), _TOKEN.findall(edited)
    # Whitespace is not junk to the matcher: on long texts autojunk makes it "popular",
    # and difflib then extends every match through it, which keeps a diff of a 100-kB
    # output well under a second. Marking it junk would split matches at every space.
    matcher = difflib.SequenceMatcher(a=old, b=new)
    # Each block is ["equal", text] or ["change", deleted, inserted].
    blocks: list[list[str]] = []
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag == "equal":
            blocks.append(["equal", "".join(old[old_start:old_end])])
        else:
            blocks.append(
                ["change", "".join(old[old_start:old_end]), "".join(new[new_start:new_end])]
            )
    return _segments(_fold_lone_whitespace(blocks))


def _fold_lone_whitespace(blocks: list[list[str]]) -> list[list[str]]:
    folded: list[list[str]] = []
    for index, block in enumerate(blocks):
        between_changes = (
            0 < index < len(blocks) - 1
            and blocks[index - 1][0] == "change"
            and blocks[index + 1][0] == "change"
        )
        if block[0] == "equal" and block[1].isspace() and between_changes:
            block = ["change", block[1], block[1]]
        if block[0] == "change" and folded and folded[-1][0] == "change":
            folded[-1] = ["change", folded[-1][1] + block[1], folded[-1][2] + block[2]]
        else:
            folded.append(block)
    return folded


def _segments(blocks: list[list[str]]) -> list[Segment]:
    segments: list[Segment] = []
    for block in blocks:
        if block[0] == "equal":
            segments.append(("equal", block[1]))
            continue
        if block[1]:
            segments.append(("delete", block[1]))
        if block[2]:
            segments.append(("insert", block[2]))
    return segments
