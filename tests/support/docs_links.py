"""Links between the Markdown pages: every relative link must reach an existing file, and
an anchor (``page.md#heading``) a heading of that page, as GitHub makes its anchors.

External links (``https:``, ``mailto:``) are not followed: the tests run offline.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.support.docs_pages import FENCE

# Links: [text](target) outside code; targets inside the repository must exist.
_LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces to ``-``."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a Markdown file's headings (outside fences)."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = None
    for line in path.read_text(encoding="utf-8").splitlines():
        m = FENCE.match(line)
        if m and (fenced is None or m["fence"][0] == fenced):
            fenced = None if fenced else m["fence"][0]
            continue
        if fenced is None and line.startswith("#"):
            base = slug(line.lstrip("#"))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link outside fenced blocks."""
    out = []
    fenced = None
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = FENCE.match(line)
        if m and (fenced is None or m["fence"][0] == fenced):
            fenced = None if fenced else m["fence"][0]
            continue
        if fenced is None:
            out.extend((no, lm["target"]) for lm in _LINK.finditer(line))
    return out


def broken_links(path: Path, root: Path, pending: frozenset[str] = frozenset()) -> list[str]:
    """Links from ``path`` to files or anchors in the repository that do not exist.
    ``pending`` names files (relative to ``root``) that are announced but not written yet."""
    bad = []
    for no, target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path.resolve()
        rel = os.path.relpath(dest, root)
        if rel in pending:
            continue
        if not dest.exists():
            bad.append(f"{path}:{no}: {target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{path}:{no}: {target}: no heading with that anchor")
    return bad
