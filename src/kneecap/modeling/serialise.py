"""Fitted results as a JSON document, and back: the only form in which kneecap stores a model.

A document names the results class and carries its ``to_dict()``: fitted parameters, bootstrap
draws and residuals as numbers, a cost model's training rows. Loading parses JSON (never a
pickle), looks the class up in a fixed table of kneecap's own results classes and rebuilds the
object with that class's ``from_dict``; nothing in the document can choose code to run.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Protocol

from kneecap.modeling.base import ModelError
from kneecap.modeling.closed import ClosedMVAResults, MultiServerMVAResults
from kneecap.modeling.combine import CombinedResults
from kneecap.modeling.cost import CostResults
from kneecap.modeling.open import OpenMMcResults
from kneecap.modeling.open_dispatch import OpenDispatchResults
from kneecap.modeling.usl import USLResults

FORMAT = "kneecap-results"
FORMAT_VERSION = 1
# A fitted model is tens of kilobytes (200 bootstrap draws, a few dozen training rows).
MAX_BYTES = 32 * 1024 * 1024


class _Results(Protocol):
    """What every stored results class has: its family, its document and the way back from it."""

    family: str

    def to_dict(self) -> dict[str, Any]: ...

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Any: ...


FAMILIES: dict[str, type[_Results]] = {
    "closed_mva": ClosedMVAResults,
    "usl": USLResults,
    "closed_mva_c": MultiServerMVAResults,
    "combined": CombinedResults,
    "open_mmc": OpenMMcResults,
    "open_dispatch": OpenDispatchResults,
    "cost_ols": CostResults,
}
_COST_FIELDS = ("family", "design", "train", "alpha", "selection_note", "target")
# protocol 2+ pickles open with PROTO (0x80); protocol 0/1 ones are not JSON and fail the parse
_PICKLE_MAGIC = (b"\x80",)


class ModelFormatError(ModelError):
    """A stored model is not a kneecap results document (a pickle, another format, a bad field)."""


def _fields(cls: type) -> tuple[set[str], set[str]]:
    """Public constructor fields of a results dataclass: (all, required)."""
    names, required = set(), set()
    for f in dataclasses.fields(cls):
        if not f.init or f.name.startswith("_"):
            continue
        names.add(f.name)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.add(f.name)
    return names, required


def results_from_dict(d: Any) -> Any:
    """Rebuild a results object from its ``to_dict()`` form (known ``family``, known fields only)."""
    if not isinstance(d, dict):
        raise ModelFormatError(f"results must be a JSON object, got {type(d).__name__}")
    family = d.get("family")
    if not isinstance(family, str) or family not in FAMILIES:
        raise ModelFormatError(f"unknown model family {family!r}; known: {sorted(FAMILIES)}")
    cls = FAMILIES[family]
    names, required = _fields(cls)
    if cls is CostResults:  # stored as its design and training rows, refitted on load
        names, required = set(_COST_FIELDS), {"design", "train", "alpha"}
    problems = []
    if unknown := sorted(set(d) - names):
        problems.append(f"unknown field(s) {', '.join(unknown)}")
    if missing := sorted(required - set(d)):
        problems.append(f"missing field(s) {', '.join(missing)}")
    if problems:
        raise ModelFormatError(f"{cls.__name__}: {'; '.join(problems)}")
    try:
        # a combination's members are stored results themselves, rebuilt through this same table
        return CombinedResults.from_dict(d, results_from_dict) if cls is CombinedResults else cls.from_dict(d)
    except ModelFormatError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
        raise ModelFormatError(f"{cls.__name__}: malformed stored results ({exc})") from exc


def results_to_document(results: Any) -> dict[str, Any]:
    """The JSON document stored for ``results``: format, version, class name and ``to_dict()``."""
    family = getattr(results, "family", None)
    cls = FAMILIES.get(family) if isinstance(family, str) else None
    if cls is None or type(results) is not cls:
        raise ModelFormatError(f"not a kneecap results object: {type(results).__name__}")
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "class": cls.__name__,
            "results": results.to_dict()}


def dumps(results: Any) -> str:
    """``results`` as JSON text (what :func:`loads` reads back)."""
    return json.dumps(results_to_document(results))


def loads(data: bytes | str, *, source: str = "model") -> Any:
    """Rebuild a results object from JSON text; refuses pickles, other formats and unknown classes.

    Only ``json`` parses the bytes: nothing in them is imported, called or unpickled.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    if len(raw) > MAX_BYTES:
        raise ModelFormatError(f"{source}: {len(raw)} bytes, over the {MAX_BYTES} a kneecap model "
                               "can be")
    if raw.startswith(_PICKLE_MAGIC):
        raise ModelFormatError(f"{source}: is a Python pickle, not a kneecap JSON model; "
                               "kneecap never unpickles a model (loading a pickle runs code)")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFormatError(f"{source}: not a kneecap JSON model ({exc})") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ModelFormatError(f"{source}: not a kneecap results document (no \"format\": \"{FORMAT}\")")
    if doc.get("format_version") != FORMAT_VERSION:
        raise ModelFormatError(f"{source}: format version {doc.get('format_version')!r}; this kneecap reads "
                               f"version {FORMAT_VERSION} (re-register with `make pipeline promote`)")
    # read from FAMILIES at each load, so that the registry is the one table a family is added to
    classes = {cls.__name__: family for family, cls in FAMILIES.items()}
    name = doc.get("class")
    if not isinstance(name, str) or name not in classes:
        raise ModelFormatError(f"{source}: unknown results class {name!r}; known: {sorted(classes)}")
    body = doc.get("results")
    if not isinstance(body, dict) or body.get("family") != classes[name]:
        raise ModelFormatError(f"{source}: class {name} does not match family "
                               f"{body.get('family') if isinstance(body, dict) else None!r}")
    return results_from_dict(body)
