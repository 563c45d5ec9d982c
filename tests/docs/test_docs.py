"""Every Python and shell example in README.md and docs/ runs, so the docs cannot drift.

The collector (tests/support/docs_pages.py) finds the fenced blocks of every Markdown page
and runs them in order, one namespace and one temporary working directory per page:
```python blocks are executed, ```console blocks run their ``$ `` commands and compare what
they print with the output shown under them (``...`` is a wildcard), ```bash blocks run
as scripts. ``bloomskip`` in a shell block is the CLI of the bloomskip being tested.
Blocks in other languages (```text, ```json, none) are not run, nor blocks marked
``<!-- docs-test: skip REASON -->`` on the line above the fence; ``<!-- docs-test: needs
spark -->`` runs a block on the shared Spark session (the page's test is marked
``spark``), ``needs lance`` skips the page without pylance. The full rules are in the
module doc of tests/support/docs_pages.py.

Run one page (its id is its path from the repository root)::

    PYTHONPATH=$PWD/src .venv/bin/python -m pytest tests/docs -q -k parquet.md
    PYTHONPATH=$PWD/src .venv/bin/python -m pytest "tests/docs/test_docs.py::test_page[docs/cli.md]"

and without Spark: ``-m "not spark"``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import docs_links, docs_pages

ROOT = Path(__file__).resolve().parents[2]
PAGES = [docs_pages.parse(p) for p in docs_pages.find_pages(ROOT)]

#: Pages the docs link to that their authors have not written yet.
PENDING: frozenset[str] = frozenset()


def _id(page: docs_pages.Page) -> str:
    return str(page.path.relative_to(ROOT))


def _param(page: docs_pages.Page):
    marks = [pytest.mark.spark] if "spark" in page.needs else []
    return pytest.param(page, id=_id(page), marks=marks)


@pytest.mark.parametrize("page", [_param(p) for p in PAGES if p.runnable])
def test_page(page: docs_pages.Page, request, tmp_path, monkeypatch):
    if "lance" in page.needs:
        pytest.importorskip("lance", reason="the page needs pylance (bloomskip[lance])")
    if "spark" in page.needs:
        request.getfixturevalue("spark")  # started here, so local_session() returns it
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    ran = docs_pages.PageRunner(page, tmp_path / "bin").run()
    assert ran == len(page.runnable)


@pytest.mark.parametrize("path", [pytest.param(p.path, id=_id(p)) for p in PAGES])
def test_links_resolve(path: Path):
    assert docs_links.broken_links(path, ROOT, PENDING) == []


def test_readme_is_short_and_shows_the_two_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "make demo" in readme and "make test" in readme


def test_every_page_is_listed_in_the_index():
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    listed = {t.partition("#")[0] for _, t in docs_links.links(ROOT / "docs" / "README.md")}
    pages = {p.name for p in (ROOT / "docs").glob("*.md") if p.name != "README.md"}
    assert pages <= listed, f"not in docs/README.md: {sorted(pages - listed)}"
    assert index.strip()
