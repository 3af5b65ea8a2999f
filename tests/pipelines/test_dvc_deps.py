"""dvc.yaml's deps are precise: each stage depends on every kneecap module its script imports,
directly or through other modules (else a change to, say, kneecap.schema would not rerun the
stages it changes, and `dvc repro` would leave stale marts or models)."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
STAGES = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))["stages"]


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


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("kneecap", cache_dir=None)


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_a_stage_depends_on_every_kneecap_module_its_script_uses(stage: str, graph) -> None:
    spec = STAGES[stage]
    script = _script(spec["cmd"])
    used = _kneecap_imports(script)
    for module in list(used):
        used |= graph.find_upstream_modules(module)
    used = {m for m in used if m != "kneecap"}  # the package's __init__ only names the version
    deps = [REPO / d for d in spec["deps"]]
    missing = sorted(m for m in used
                     if not any(_file(m) == d or d in _file(m).parents for d in deps))
    assert not missing, f"{stage}: dvc.yaml deps miss {missing}"
