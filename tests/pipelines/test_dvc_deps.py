"""dvc.yaml's deps are exact: each stage depends on every kneecap module its script imports,
directly or through other modules (else a change to, say, kneecap.schema would not rerun the
stages it changes, and `dvc repro` would leave stale marts or models), and on nothing else of
kneecap (else a change to the models would rerun the SMF decode and the marts for nothing)."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest
import yaml

from kneecap.smf.reader import PLUGIN_MODULES

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
STAGES = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
#: Modules a module loads by name at run time, which no import statement shows.
LOADED_BY_NAME = {"kneecap.smf.reader": PLUGIN_MODULES}
#: Stages upstream of the fits: no change to the models may rerun them.
BEFORE_THE_MODELS = ("decode_smf", "build_marts")


def _script(cmd: str) -> Path:
    words = cmd.split()
    return REPO / words[words.index("python") + 1]


def _kneecap_imports(script: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "kneecap"}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "kneecap":
            for alias in node.names:  # `from kneecap import warehouse` names a module
                full = f"{node.module}.{alias.name}"
                found.add(full if (SRC / Path(*full.split("."))).with_suffix(".py").exists()
                          or (SRC / Path(*full.split("."))).is_dir() else node.module)
    return found


def _file(module: str) -> Path:
    path = SRC / Path(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _module(file: Path) -> str:
    return ".".join(file.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("kneecap", cache_dir=None)


def _used(stage: str, graph: grimp.ImportGraph) -> set[str]:
    """Every kneecap module the stage's script runs: its imports, theirs, the packages they sit in."""
    todo, used = list(_kneecap_imports(_script(STAGES[stage]["cmd"]))), set()
    while todo:
        module = todo.pop()
        if module in used:
            continue
        used.add(module)
        parents = [module.rsplit(".", k)[0] for k in range(1, module.count("."))]
        todo += [m for m in graph.find_modules_directly_imported_by(module) if m.split(".")[0] == "kneecap"]
        todo += parents + list(LOADED_BY_NAME.get(module, ()))
    return used - {"kneecap"}  # the package's __init__ only names the version


def _kneecap_deps(stage: str) -> list[Path]:
    return [REPO / d for d in STAGES[stage]["deps"] if (REPO / d) == SRC or SRC in (REPO / d).parents]


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_a_stage_depends_on_every_kneecap_module_its_script_uses(stage: str, graph) -> None:
    deps = _kneecap_deps(stage)
    missing = sorted(m for m in _used(stage, graph)
                     if not any(_file(m) == d or d in _file(m).parents for d in deps))
    assert not missing, f"{stage}: dvc.yaml deps miss {missing}"


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_a_stage_depends_on_no_kneecap_module_its_script_does_not_use(stage: str, graph) -> None:
    used = _used(stage, graph)
    # a folder is a dep only when the stage runs every module in it; otherwise its files are listed
    extra = sorted(f"{d.relative_to(REPO)} ({_module(f)})" for d in _kneecap_deps(stage)
                   for f in ([d] if d.suffix == ".py" else sorted(d.rglob("*.py")))
                   if _module(f) not in used)
    assert not extra, f"{stage}: dvc.yaml deps name modules the stage does not import: {extra}"


@pytest.mark.parametrize("stage", BEFORE_THE_MODELS)
def test_a_change_to_the_models_leaves_decoding_and_the_marts_up_to_date(stage: str, graph) -> None:
    # with the two tests above, this is `dvc status` after an edit in src/kneecap/modeling:
    # decode_smf and build_marts stay up to date (checked once by hand, issue #36)
    models = SRC / "kneecap" / "modeling"
    assert not [d for d in _kneecap_deps(stage) if d == models or d in models.parents or models in d.parents]
    assert not {m for m in _used(stage, graph) if m.split(".")[:2] == ["kneecap", "modeling"]}
