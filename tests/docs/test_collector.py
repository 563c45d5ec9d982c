"""The docs collector itself: fences, markers, console commands and output matching."""

from __future__ import annotations

import pytest

from tests.support import docs_links, docs_pages

PAGE = """\
# Title

```python
x = 1
```

<!-- docs-test: skip needs S3 -->
```python
read("s3://bucket/")
```

<!-- docs-test: needs spark -->

```python
spark = 1
```

~~~console
$ echo one \\
> two
one two
$ echo quiet
~~~

```text
$ not run
```

- a list item with a fence
  ```bash
  echo indented
  ```
"""


@pytest.fixture
def page(tmp_path):
    path = tmp_path / "page.md"
    path.write_text(PAGE, encoding="utf-8")
    return docs_pages.parse(path)


def test_blocks_languages_lines_and_markers(page):
    got = [(b.lang, b.line, b.skip, sorted(b.needs), b.runs) for b in page.blocks]
    assert got == [
        ("python", 4, None, [], True),
        ("python", 9, "needs S3", [], False),
        ("python", 15, None, ["spark"], True),
        ("console", 19, None, [], True),
        ("text", 26, None, [], False),
        ("bash", 31, None, [], True),
    ]
    assert page.needs == {"spark"}
    assert page.blocks[-1].code == "echo indented\n"


def test_console_commands_and_their_output(page):
    cmds = docs_pages.console_commands(page.blocks[3])
    assert [(c.line, c.command, c.expected) for c in cmds] == [
        (19, "echo one \\\ntwo", "one two\n"),
        (22, "echo quiet", None),
    ]


@pytest.mark.parametrize(
    ("expected", "actual", "ok"),
    [
        ("a\nb\n", "a\nb\n", True),
        ("a\nb\n", "a  \nb\n", True),
        ("a\nb\n", "a\nc\n", False),
        ("took ... s\n", "took 0.70 s\n", True),
        ("took ... s\n", "took 0.70 s\nmore\n", False),
        ("head\n...\ntail\n", "head\n1\n2\ntail\n", True),
        ("head\n...\ntail\n", "head\ntail\n", True),
        ("a ... b\n", "a x\ny b\n", False),
    ],
)
def test_output_matching(expected, actual, ok):
    assert docs_pages.output_matches(expected, actual) is ok


def test_unknown_marker_is_an_error(tmp_path):
    path = tmp_path / "bad.md"
    path.write_text("<!-- docs-test: needs gpu -->\n```python\npass\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="needs"):
        docs_pages.parse(path)


def test_a_failing_block_names_the_page_and_line(tmp_path, monkeypatch):
    path = tmp_path / "fail.md"
    path.write_text("text\n\n```console\n$ echo no\nyes\n```\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    runner = docs_pages.PageRunner(docs_pages.parse(path), tmp_path / "bin")
    with pytest.raises(docs_pages.PageError, match=r"fail\.md:4"):
        runner.run()


def test_python_tracebacks_point_into_the_page(tmp_path, monkeypatch):
    path = tmp_path / "raise.md"
    path.write_text("# t\n\n```python\nx = 1\nraise KeyError(x)\n```\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    runner = docs_pages.PageRunner(docs_pages.parse(path), tmp_path / "bin")
    with pytest.raises(KeyError) as info:
        runner.run()
    last = info.traceback[-1]
    assert (str(last.path), last.lineno + 1) == (str(path), 5)


def test_the_shim_runs_this_bloomskip(tmp_path, monkeypatch):
    path = tmp_path / "cli.md"
    path.write_text("```console\n$ bloomskip size --ndv 100 --fpp 0.01 --json\n{...}\n```\n")
    monkeypatch.chdir(tmp_path)
    assert docs_pages.PageRunner(docs_pages.parse(path), tmp_path / "bin").run() == 1


def test_slugs_and_links(tmp_path):
    (tmp_path / "a.md").write_text("# How we know it's right\n## `add_bloom` and `probe`\n")
    (tmp_path / "b.md").write_text(
        "[ok](a.md#how-we-know-its-right) [ok](a.md#add_bloom-and-probe) [bad](a.md#nope) "
        "[bad](c.md) [web](https://example.org/x) [later](d.md)\n"
    )
    bad = docs_links.broken_links(tmp_path / "b.md", tmp_path, frozenset({"d.md"}))
    assert [b.split(": ", 1)[1] for b in bad] == [
        "a.md#nope: no heading with that anchor",
        "c.md: no such file",
    ]
