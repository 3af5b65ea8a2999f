"""The house style's boundaries, enforced: which module may use which heavy or I/O library
(import-linter contracts in `.importlinter`), what the desk imports, and no reaching into another
module's private names."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "kneecap"

#: What the desk (app/) may import besides the standard library: kneecap, Streamlit and its charts,
#: pandas for the frames kneecap returns, and its own modules (resources, tables, inputs, charts).
DESK_IMPORTS = {"kneecap", "streamlit", "plotly", "pandas", "resources", "tables", "inputs", "charts"}
#: kneecap modules only app/resources.py imports: the store, the warehouse, the fits and the
#: readers of files, whose calls it caches (a page imports the pure modules it needs itself)
DESK_CACHED_ONLY = ("kneecap.tracking", "kneecap.warehouse", "kneecap.training", "kneecap.ingest",
                    "kneecap.validation", "kneecap.cli", "kneecap.spark")


def test_import_contracts_hold() -> None:
    lint = Path(sys.executable).parent / "lint-imports"
    # --no-cache: the cache keys on file times, which a checkout or a quick edit can leave equal
    result = subprocess.run([str(lint), "--config", str(REPO / ".importlinter"), "--no-cache", "--no-logo"],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout and "11 kept" in result.stdout, result.stdout[-2000:]


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_the_desk_imports_kneecap_and_streamlit_and_nothing_else_heavy() -> None:
    found = {p.relative_to(REPO).as_posix(): _imported_roots(p) - set(sys.stdlib_module_names) - DESK_IMPORTS
             for p in sorted((REPO / "app").rglob("*.py"))}
    assert found and not any(found.values()), {k: v for k, v in found.items() if v}


def _imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
    return found


def test_the_pages_load_through_resources_and_only_resources_caches() -> None:
    """A page is widgets, a call into resources or a pure kneecap function, and a chart; resources
    is the one cache and the one reader of the store, the marts and files (house style, issue 36).

    So the maths, registry reading and upload decoding a page shows stay in the library, tested there."""
    desk = sorted((REPO / "app").rglob("*.py"))
    reaching = [f"{p.relative_to(REPO).as_posix()}: {m}" for p in desk if p.name != "resources.py"
                for m in sorted(_imported_modules(p)) if m.startswith(DESK_CACHED_ONLY)]
    caching = [f"{p.relative_to(REPO).as_posix()}:{node.lineno}" for p in desk if p.name != "resources.py"
               for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
               if isinstance(node, ast.Attribute) and node.attr in ("cache_data", "cache_resource")]
    assert desk and not reaching and not caching, (reaching, caching)


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(SRC.parent).with_suffix("").parts).removesuffix(".__init__")


def test_no_module_reaches_into_another_modules_private_names() -> None:
    """`from kneecap.x import _y` or `x._y` on another kneecap module: a private helper used
    elsewhere is a public function waiting to be named (finding 12 of the hardening issue)."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = _module_name(path)
        modules: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kneecap"):
                for alias in node.names:
                    if alias.name.startswith("_"):
                        found.append(f"{path.name}:{node.lineno}: from {node.module} import {alias.name}")
                    target = f"{node.module}.{alias.name}"
                    if importlib.util.find_spec(node.module) and _is_module(target):
                        modules[alias.asname or alias.name] = target
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in modules and modules[node.value.id] != own
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                found.append(f"{path.name}:{node.lineno}: {modules[node.value.id]}.{node.attr}")
    assert not found, found


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def test_the_decoders_write_no_files() -> None:
    """kneecap.smf and kneecap.rmf read their input and return frames; kneecap.ingest stores them.

    `.importlinter` keeps pyarrow and kneecap.ingest out of them; this catches what an import
    contract cannot see: pandas' own Parquet writer, a lock, a file opened for writing."""
    writes = ("to_parquet", "to_csv", "fcntl", "write_bytes", "write_text", "np.save")
    found = []
    for path in sorted([*(SRC / "smf").rglob("*.py"), *(SRC / "rmf").rglob("*.py")]):
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(SRC)}: {w}" for w in writes if w in text]
        for node in ast.walk(ast.parse(text)):
            builtin = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open"
            method = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "open"
            if builtin or method:  # open(file, mode) or path.open(mode)
                assert isinstance(node, ast.Call)
                given = [*node.args[1 if builtin else 0:], *(k.value for k in node.keywords if k.arg == "mode")]
                modes = [a.value for a in given if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                found += [f"{path.relative_to(SRC)}:{node.lineno}: open(..., {m!r})"
                          for m in modes if set(m) & set("wax+")]
    assert not found, found



def _result_class_tests(source: str, name: str, classes: set[str], families: set[str]) -> list[str]:
    """``isinstance(x, <results class>)`` and comparisons with a family's name in one file's ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance",
                                                                                                "issubclass"):
            kinds = node.args[1].elts if len(node.args) == 2 and isinstance(node.args[1], ast.Tuple) else node.args[1:]
            named = {k.id if isinstance(k, ast.Name) else k.attr
                     for k in kinds if isinstance(k, (ast.Name, ast.Attribute))}
            if named & classes:
                found.append(f"{name}:{node.lineno}: {node.func.id}(..., {', '.join(sorted(named))})")
        if isinstance(node, ast.Compare) and families:
            sides = (node.left, *node.comparators)
            names = {c.value for c in sides if isinstance(c, ast.Constant) and isinstance(c.value, str)}
            # a family module's name for itself (closed.FAMILY, CLASS_FAMILY)
            names |= {c.attr if isinstance(c, ast.Attribute) else c.id for c in sides
                      if isinstance(c, (ast.Attribute, ast.Name))
                      and (c.attr if isinstance(c, ast.Attribute) else c.id).endswith("FAMILY")}
            if names & families or any(n.endswith("FAMILY") for n in names):
                found.append(f"{name}:{node.lineno}: compares with family {sorted(names)}")
    return found


def test_consumers_call_the_family_and_never_test_its_class() -> None:
    """Outside kneecap.modeling, a results object is asked (curve, knee, answer, pools, load_unit, ...),
    never tested for its class or compared with a family's name: a new family then touches its
    module, the registry and the selection only (tests/modeling/test_families.py)."""
    from kneecap.modeling.serialise import FAMILIES

    classes = {cls.__name__ for cls in FAMILIES.values()}
    consumers = [p for p in sorted(SRC.rglob("*.py")) if "modeling" not in p.relative_to(SRC).parts]
    consumers += sorted((REPO / "app").rglob("*.py"))
    found = [line for path in consumers
             for line in _result_class_tests(path.read_text(encoding="utf-8"), path.name, classes, set(FAMILIES))]
    assert not found, found
    # the check finds what it looks for: tests of the kind forecasting.py had before this contract
    sample = ("if isinstance(res, (ClosedMVAResults, modeling.OpenDispatchResults)) or res.family == 'usl':\n"
              "    pass\nelif res.family != closed.FAMILY:\n    pass\n")
    assert len(_result_class_tests(sample, "sample", classes, set(FAMILIES))) == 3


#: Longest module of the library, in lines (issue 36): past it a module holds more than one idea
MAX_MODULE_LINES = 800


def test_no_library_module_is_longer_than_the_house_allows() -> None:
    lengths = {str(path.relative_to(SRC)): len(path.read_text(encoding="utf-8").splitlines())
               for path in SRC.rglob("*.py")}
    assert len(lengths) > 50
    too_long = {name: n for name, n in lengths.items() if n > MAX_MODULE_LINES}
    assert not too_long, f"split these by concept (no module over {MAX_MODULE_LINES} lines): {too_long}"
