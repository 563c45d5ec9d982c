"""The shape of the package: no import cycles, and ``import bloomskip`` stays light.

Every ``import`` and ``from ... import`` statement of every module of ``src/bloomskip``
(at the top or inside functions alike) is an edge of the module graph; the graph must
have no cycle. Plugins found by name at run time (:data:`bloomskip.sources.DATASETS`,
:func:`bloomskip._lazy.lazy`) are not edges: that is how a lower layer reaches a higher
one without depending on it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import bloomskip

ROOT = Path(bloomskip.__file__).parent


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.AST):
    """Import statements, except those only type checkers run (``if TYPE_CHECKING:``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up) + (f".{node.module}" if node.module else "")
                # ``from pkg import submodule`` needs the submodule, not the package.
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                    for a in node.names
                ]
            for t in targets:
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t and t != name and t.startswith("bloomskip"):
                    graph[name].add(t)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return [*stack[stack.index(n) :], n]
            if n not in state and (found := walk(n)):
                return found
        state[m] = 2
        stack.pop()
        return None

    for m in sorted(graph):
        if m not in state and (found := walk(m)):
            return found
    return None


def test_no_import_cycle_between_modules():
    graph = _graph()
    assert len(graph) > 50
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


def test_import_bloomskip_loads_no_numba_pyspark_or_pylance():
    heavy = "{'numba', 'pyspark', 'lance', 'deltalake', 'pyiceberg'}"
    code = (
        "import sys, bloomskip, bloomskip.index, bloomskip.parquet, bloomskip.orc, "
        "bloomskip.sources, bloomskip.formats, bloomskip.lance, bloomskip.spark, bloomskip.expr, "
        "bloomskip.tables; "
        f"heavy = sorted({{m.split('.')[0] for m in sys.modules}} & {heavy}); "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", out.stdout


def test_a_point_lookup_on_an_index_loads_no_numba(tmp_path):
    """A cold lookup hashes its few values with ``xxhash`` and probes block rows in numpy:
    numba's import alone (about 0.4 s) would exceed a lookup's whole budget."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bloomskip import index

    lake = tmp_path / "lake"
    lake.mkdir()
    for i in range(3):
        pq.write_table(
            pa.table({"k": pa.array(range(i * 100, i * 100 + 100), pa.int64()),
                      "s": [f"v{j}" for j in range(100)]}),
            lake / f"{i}.parquet",
        )  # fmt: skip
    index.build(lake, ["k", "s"], tmp_path / "idx", zone_rows=32)
    code = (
        "import sys; from bloomskip import index; "
        f"ix = index.open({str(tmp_path / 'idx')!r}); "
        "r = ix.query(\"k = 150 OR s IN ('v1', 'v2')\", check_source=False); "
        "print(len(r.paths), 'numba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["3", "False"], out.stdout + out.stderr
