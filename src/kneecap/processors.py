r"""Published processor capacities and the processor-change what-if: the answers on another machine.

``data/reference/processor_capacity.yaml`` lists, per machine type and capacity setting
(``3931-601``: an IBM z16 A01 CP at setting 6), the one-CP capacity a source prints: its PCI
(Processor Capacity Index) and/or its share of the machine's full-capacity (7xx) CP, each with the
words it is printed in and the source (title, author, publisher, date, slide or page, URL).
:func:`read_catalogue` reads and checks it; :func:`capacity_change` turns a change of processor
into capacity ratios; :func:`answer_on_target` answers a ``kneecap forecast`` scenario with
``processor: {from, to, ratio_doubt_pct}`` on the target's engines, with the ratio's doubt in the band.

A change of processor is a change of engine speeds (:mod:`kneecap.modeling.engines`): the fitted
CPU demand stays in CP-equivalent ms of the measured machine, and each engine's speed relative to
that unit is scaled by the published capacities. A sub-capacity setting slows the GCPs; zIIPs
always run at the machine's full capacity ("All specialty engines continue to run at full speed",
IBM System z10 EC Reference Guide, p. 13), so on one machine type their speed does not change:

.. math::

    v_G' = v_G\,\frac{C(\text{to})}{C(\text{from})}, \qquad
    v_Z' = v_Z\,\frac{C_7(\text{to})}{C_7(\text{from})}

with :math:`v_G, v_Z` the speeds the model answers on (1 and 1 for a model fitted on engines
alike, 1 and NFFS / 256 for a WLM class fitted on a sub-capacity LPAR's SMF), :math:`C` the
one-CP capacity of a setting and :math:`C_7` that of its machine's full-capacity CP (701). A
ratio is of PCIs where both rows print one, else of the printed percentages of one machine's
full CP; a change between machine types needs both settings' and both 701s' PCI. The ratio of
one-CP (x01) figures is taken per engine at the scenario's GCP count.

IBM prints these figures as approximate ("601 ≈ 66% ≈ 1,496 PCI") and no precision for them; its
own caveat is "PCI Tables are NOT adequate for making comparisons of IBM Z processors. Additional
capacity planning required", and its LSPR documentation says the relative capacity of one
processor to another "will be very dependent on the type of the work being run" (IBM eServer
zSeries 990 Technical Guide, SG24-6947, §8.8). So the scenario states the relative doubt
:math:`\delta` it puts on each ratio that is not 1 by identity, and the answer is the envelope of
the answers with the ratios at :math:`r (1 - \delta)`, :math:`r` and :math:`r (1 + \delta)`:
each ``*_lo`` the least and each ``*_hi`` the greatest over the three (every answer is monotone
in an engine's speed, so the band covers the ratios in between).

References
----------
K. Stine, *IBM z16 Technical Overview*, IBM Washington Systems Center, 2022, slides "IBM z16
Technical Overview_14" and "IBM z16 Full and Sub-Capacity CP Offerings". IBM, *IBM System z10
Enterprise Class Reference Guide*, p. 13. T. Havekost, "The Expanding Role of Sub-capacity
Processors in Today's Mainframe Configurations", IntelliMagic, 2024 (IBM TechXchange Community).
IBM, *IBM eServer zSeries 990 Technical Guide*, SG24-6947, §8.8 "Large Systems Performance
Reference".
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kneecap._answer_checks import WARNINGS_SEPARATOR
from kneecap.limits import InputError, load_yaml, read_text, short_repr
from kneecap.modeling.answers import SATURATED

#: Largest catalogue read: the bundled one is 8 KB.
MAX_CATALOGUE_BYTES = 4 << 20
#: The keys of a scenario's ``processor`` mapping (all required: the doubt has no default).
PROCESSOR_KEYS = ("from", "to", "ratio_doubt_pct")
#: Largest relative doubt a scenario may put on a ratio, %: past it the slow end is no machine.
MAX_RATIO_DOUBT_PCT = 50.0
#: Kinds of source: IBM's own publication or a third party's.
SOURCE_KINDS = ("ibm", "third_party")
#: Answers also given at the ratio's two ends (``<column>_at_ratio_low`` / ``_at_ratio_high``).
END_COLUMNS = ("recommended_n_ziip", "recommended_n_gcp", "knee_clients", "knee_tps", "status")

_ID = re.compile(r"(?P<machine_type>\d{4})-(?P<setting>[1-9A-Z][0-9A-Z]{2})")
_SOURCE_FIELDS = ("title", "author", "publisher", "date", "url", "kind", "note")
_PROCESSOR_FIELDS = ("id", "machine", "pci", "relative_capacity_pct", "approximate", "quote", "source", "locator",
                     "note")
_BAND = re.compile(r"(?P<stem>.+)_lo(?P<suffix>(?:_adjusted)?)")


class ProcessorError(ValueError):
    """A catalogue that cannot be read, or a processor change that cannot be answered; the message says why."""


@dataclass(frozen=True)
class Source:
    """A publication the catalogue cites (``sources`` of the YAML file)."""

    key: str
    title: str
    author: str
    publisher: str
    date: str
    url: str
    kind: str
    note: str = ""


@dataclass(frozen=True)
class Processor:
    """One catalogue row: a capacity setting's one-CP capacity as printed, and where."""

    processor_id: str
    machine: str
    pci: float | None
    relative_capacity_pct: float | None
    approximate: bool
    quote: str
    source: Source
    locator: str
    note: str = ""

    @property
    def machine_type(self) -> str:
        """``3931`` of ``3931-601``."""
        return self.processor_id.split("-")[0]

    @property
    def is_full_capacity(self) -> bool:
        """A 7xx setting: the machine's full-capacity CP."""
        return self.processor_id.split("-")[1].startswith("7")

    @property
    def citation(self) -> str:
        """``<title>, <author>, <publisher>, <date>, <locator>: "<quote>" <url>``."""
        s = self.source
        return f'{s.title}, {s.author}, {s.publisher}, {s.date}, {self.locator}: "{self.quote}" {s.url}'


@dataclass(frozen=True)
class Catalogue:
    """The processors by id, and IBM's caveat on comparing them with its citation."""

    processors: Mapping[str, Processor]
    caveat: str
    caveat_citation: str

    def get(self, processor_id: Any) -> Processor:
        """The row of ``processor_id``; :class:`ProcessorError` naming it and the known ids otherwise."""
        key = str(processor_id).strip().upper()
        if key not in self.processors:
            raise ProcessorError(f"processor {short_repr(processor_id)} is not in the catalogue (no published "
                                 f"capacity kneecap carries); known: {', '.join(self.processors)}")
        return self.processors[key]


def _number(value: Any, where: str, problems: list[str]) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        problems.append(f"{where}: {short_repr(value)} is not a positive number")
        return None
    return float(value)


def _printed(number: float, quote: str) -> bool:
    """Whether ``number`` is in ``quote`` as a source prints it (``1,496``, ``66%``, ``23.69%``)."""
    words = {f"{number:,.0f}" if number.is_integer() else f"{number:,g}", f"{number:g}"}
    return any(re.search(rf"(?<![\d.,]){re.escape(w)}(?![\d]|[.,]\d)", quote) for w in words)


def _entry(raw: Any, fields: tuple[str, ...], where: str, problems: list[str]) -> bool:
    """Whether ``raw`` is a mapping (a problem said if not); a problem said for each field not in ``fields``."""
    if not isinstance(raw, Mapping):
        problems.append(f"{where}: expected a mapping of {', '.join(fields)}")
        return False
    unknown = sorted(map(str, set(raw) - set(fields)))
    if unknown:
        problems.append(f"{where}: unknown field(s) {', '.join(unknown)}")
    return True


def _source(key: str, raw: Any, where: str, problems: list[str]) -> Source | None:
    if not _entry(raw, _SOURCE_FIELDS, where, problems):
        return None
    cells = {f: str(raw.get(f) or "").strip() for f in _SOURCE_FIELDS}
    for f in ("title", "author", "publisher", "date", "url"):
        if not cells[f]:
            problems.append(f"{where}: {f}: empty (every source is cited in full)")
    if cells["url"] and not cells["url"].startswith(("https://", "http://")):
        problems.append(f"{where}: url: {short_repr(cells['url'])} is not a web address")
    if cells["kind"] not in SOURCE_KINDS:
        problems.append(f"{where}: kind: {short_repr(cells['kind'])} is not one of {SOURCE_KINDS}")
    return Source(key, **cells)


def _processor(raw: Any, sources: Mapping[str, Source], where: str, problems: list[str]) -> Processor | None:
    if not _entry(raw, _PROCESSOR_FIELDS, where, problems):
        return None
    pid = str(raw.get("id") or "")
    where = f"{where} ({pid})"
    if not _ID.fullmatch(pid):
        problems.append(f"{where}: id: {short_repr(pid)} is not <machine type>-<capacity setting> (3931-601)")
        return None
    text = {f: str(raw.get(f) or "").strip() for f in ("machine", "quote", "source", "locator", "note")}
    for f in ("machine", "quote", "locator"):
        if not text[f]:
            problems.append(f"{where}: {f}: empty (every figure is cited)")
    source = sources.get(text["source"])
    if source is None:
        problems.append(f"{where}: source: {short_repr(text['source'])} is not a key of sources")
    pci = _number(raw.get("pci"), f"{where}: pci", problems)
    pct = _number(raw.get("relative_capacity_pct"), f"{where}: relative_capacity_pct", problems)
    if pci is None and pct is None:
        problems.append(f"{where}: neither pci nor relative_capacity_pct: a row carries a printed figure")
    full = pid.split("-")[1].startswith("7")
    if pct is not None and pct > 100:
        problems.append(f"{where}: relative_capacity_pct: {pct:g} is more than the full-capacity CP's 100")
    if full and pct is not None and pct != 100:
        problems.append(f"{where}: relative_capacity_pct: a full-capacity (7xx) CP is the 100 % reference")
    # the figure is the source's: its digits are in the quote (the 7xx reference may be named in words)
    for column, value in (("pci", pci), ("relative_capacity_pct", pct)):
        if value is not None and not _printed(value, text["quote"]) and not (full and column != "pci"):
            problems.append(f"{where}: {column}: {value:g} is not in the quote {short_repr(text['quote'])}")
    approximate = raw.get("approximate")
    if not isinstance(approximate, bool):
        problems.append(f"{where}: approximate: {short_repr(approximate)} is not true or false")
    if source is None or problems and any(p.startswith(where) for p in problems):
        return None
    return Processor(pid, text["machine"], pci, pct, bool(approximate), text["quote"], source, text["locator"],
                     text["note"])


def read_catalogue(path: str | os.PathLike[str]) -> Catalogue:
    """Read and check a processor capacity catalogue (``data/reference/processor_capacity.yaml``).

    Returns
    -------
    Catalogue
        Processors by id, in file order, and IBM's caveat with its citation.

    Raises
    ------
    ProcessorError
        Listing every problem as ``file: processors[i] (id): field: problem``: a row without a
        figure, a figure that is not in its quote, a source not cited in full, a repeated id.
    """
    path = Path(path)
    try:
        raw = load_yaml(read_text(path, MAX_CATALOGUE_BYTES), str(path))
    except (InputError, OSError, ValueError) as exc:
        raise ProcessorError(str(exc)) from None
    if not isinstance(raw, Mapping) or set(raw) != {"caveat", "sources", "processors"}:
        raise ProcessorError(f"{path}: expected exactly the sections caveat, sources, processors")
    problems: list[str] = []
    raw_sources = raw["sources"] if isinstance(raw["sources"], Mapping) else {}
    sources = {str(k): s for k, v in raw_sources.items()
               if (s := _source(str(k), v, f"{path}: sources.{k}", problems)) is not None}
    processors: dict[str, Processor] = {}
    for i, item in enumerate(raw["processors"] if isinstance(raw["processors"], list) else []):
        row = _processor(item, sources, f"{path}: processors[{i}]", problems)
        if row is not None and row.processor_id in processors:
            problems.append(f"{path}: processors[{i}] ({row.processor_id}): id repeats an earlier row")
        elif row is not None:
            processors[row.processor_id] = row
    if not processors and not problems:
        problems.append(f"{path}: processors: no rows")
    caveat = raw["caveat"] if isinstance(raw["caveat"], Mapping) else {}
    quote, source = str(caveat.get("quote") or ""), sources.get(str(caveat.get("source") or ""))
    if not quote or source is None or not caveat.get("locator"):
        problems.append(f"{path}: caveat: needs its quote, a source key and a locator")
    if problems:
        raise ProcessorError("\n".join(problems))
    assert source is not None
    citation = f"{source.title}, {source.author}, {source.publisher}, {source.date}, {caveat['locator']} {source.url}"
    return Catalogue(processors, quote, citation)


def capacity_ratio(source: Processor, target: Processor) -> float:
    """One CP's capacity at ``target`` over one at ``source``, from the printed figures.

    PCI over PCI where both rows print one; else, on one machine type, the printed percentages of
    its full-capacity CP.

    Raises
    ------
    ProcessorError
        When the two figures are not comparable: different machines without both PCIs.
    """
    if source.pci is not None and target.pci is not None:
        return target.pci / source.pci
    if source.machine_type == target.machine_type and None not in (source.relative_capacity_pct,
                                                                    target.relative_capacity_pct):
        return float(target.relative_capacity_pct) / float(source.relative_capacity_pct)  # type: ignore[arg-type]
    raise ProcessorError(f"{source.processor_id} -> {target.processor_id}: no printed figures compare them "
                         "(a change between machine types needs both settings' PCI)")


@dataclass(frozen=True)
class CapacityChange:
    """A change of processor as capacity ratios: ``gcp_ratio`` of one CP, ``ziip_ratio`` of a full-capacity CP."""

    source: Processor
    target: Processor
    gcp_ratio: float
    ziip_ratio: float
    ziip_rows: tuple[Processor, ...] = ()

    @property
    def citations(self) -> tuple[str, ...]:
        """Every row whose figure the ratios use, cited, each once."""
        rows = dict.fromkeys((self.source, self.target, *self.ziip_rows))
        return tuple(f"{r.processor_id}: {r.citation}" for r in rows)

    @property
    def sources(self) -> set[str]:
        """The keys of the publications the ratios come from."""
        return {r.source.key for r in (self.source, self.target, *self.ziip_rows)}

    def engines(self, measured: Mapping[str, Any], scale: float = 1.0) -> dict[str, float]:
        r"""``gcp_speed`` and ``ziip_speed`` on the target, each ratio that is not 1 by identity times ``scale``.

        ``measured``: the speeds the model answers on (``{}``: 1 and 1). See the module's formula.
        """
        gcp = self.gcp_ratio * (scale if self.source != self.target else 1.0)
        ziip = self.ziip_ratio * (scale if self.source.machine_type != self.target.machine_type else 1.0)
        return {"gcp_speed": float(measured.get("gcp_speed", 1.0)) * gcp,
                "ziip_speed": float(measured.get("ziip_speed", 1.0)) * ziip}


def _full_capacity(machine_type: str, catalogue: Catalogue) -> Processor:
    row = catalogue.processors.get(f"{machine_type}-701")
    if row is None or row.pci is None:
        raise ProcessorError(f"{machine_type}-701's PCI is not in the catalogue: a zIIP's speed on another "
                             "machine type cannot be compared without it")
    return row


def capacity_change(source_id: Any, target_id: Any, catalogue: Catalogue) -> CapacityChange:
    """The capacity ratios of a change from ``source_id`` to ``target_id`` (e.g. ``3931-701`` to ``3931-601``).

    Raises
    ------
    ProcessorError
        An id not in the catalogue (named, with the known ones), or figures that do not compare.
    """
    source, target = catalogue.get(source_id), catalogue.get(target_id)
    gcp = capacity_ratio(source, target)
    if source.machine_type == target.machine_type:
        return CapacityChange(source, target, gcp, 1.0)
    full_from, full_to = _full_capacity(source.machine_type, catalogue), _full_capacity(target.machine_type, catalogue)
    return CapacityChange(source, target, gcp, capacity_ratio(full_from, full_to), (full_from, full_to))


def processor_spec(spec: Any) -> tuple[str, str, float]:
    """``(from, to, doubt as a fraction)`` of a scenario's ``processor`` mapping.

    Raises
    ------
    ProcessorError
        Not a mapping of exactly :data:`PROCESSOR_KEYS`, or a doubt that is not 0..50 %.
    """
    if not isinstance(spec, Mapping) or set(map(str, spec)) != set(PROCESSOR_KEYS):
        raise ProcessorError(f"processor must be a mapping of {', '.join(PROCESSOR_KEYS)} (the doubt on the "
                             f"published ratio has no default: IBM prints none), got {short_repr(spec)}")
    doubt = spec["ratio_doubt_pct"]
    if isinstance(doubt, bool) or not isinstance(doubt, (int, float)) or not 0 <= doubt <= MAX_RATIO_DOUBT_PCT:
        raise ProcessorError(f"processor.ratio_doubt_pct must be a number from 0 to {MAX_RATIO_DOUBT_PCT:g}, "
                             f"got {short_repr(doubt)}")
    return str(spec["from"]).strip().upper(), str(spec["to"]).strip().upper(), float(doubt) / 100.0


def _comparable(values: Sequence[Any]) -> list[Any]:
    numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)
               and not math.isnan(float(v))]
    texts = [v for v in values if isinstance(v, str)]
    return numbers if numbers and not texts else texts if texts and not numbers else []


def envelope(point: Mapping[str, Any], ends: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``point``'s answers with each band ``*_lo`` / ``*_hi`` (and ``*_lo_adjusted``) widened to hold ``ends``'.

    A band's low is the least of the rows' lows and middles, its high the greatest of their highs
    and middles; where an end is saturated and has no middle, the high has no bound (``inf``).
    """
    out = dict(point)
    for key in point:
        m = _BAND.fullmatch(key)
        hi, mid = (f"{m['stem']}_hi{m['suffix']}", f"{m['stem']}{m['suffix']}") if m else ("", "")
        if not m or hi not in point:
            continue
        rows = (point, *ends)
        lows, highs = _comparable([r.get(c) for r in rows for c in (key, mid)]), _comparable(
            [r.get(c) for r in rows for c in (hi, mid)])
        if lows:
            out[key] = min(lows)
        if highs:
            out[hi] = max(highs)
        unbounded = any(e.get("status") == SATURATED and e.get(mid) is None and point.get(mid) is not None
                        for e in ends)
        if unbounded and highs and not isinstance(highs[0], str):
            out[hi] = math.inf
    return out


def _fit_warning(change: CapacityChange, measured: Mapping[str, Any], catalogue: Catalogue, doubt: float) -> str:
    """Where the speeds the model was fitted on disagree with what the ``from`` setting says."""
    full = catalogue.processors.get(f"{change.source.machine_type}-701")
    if full is None:
        return ""
    try:
        expected = capacity_ratio(change.source, full)  # a zIIP over a GCP on the from setting
    except ProcessorError:
        return ""
    fitted = float(measured.get("ziip_speed", 1.0)) / float(measured.get("gcp_speed", 1.0))
    if abs(fitted / expected - 1.0) <= max(doubt, 1e-6):
        return ""
    return (f"the model was fitted with a zIIP at {fitted:.3g} x a GCP's speed, while {change.source.processor_id} "
            f"runs its GCPs at {100.0 / expected:.3g} % of full capacity (a zIIP {expected:.3g} x): the answers "
            "scale the fitted speeds")


def answer_on_target(ask: Callable[[Mapping[str, Any]], dict[str, Any]], scenario: Mapping[str, Any],
                     catalogue: Catalogue | None, results: Any) -> dict[str, Any]:
    """A scenario with ``processor: {from, to, ratio_doubt_pct}`` answered on the target's engines.

    Parameters
    ----------
    ask
        Answers a scenario without ``processor`` (:func:`kneecap.forecasting.forecast_scenario`).
    scenario
        The scenario; ``gcp_speed`` / ``ziip_speed`` may not be given with ``processor``
        (``ziip_mt`` and ``ziip_mt_capacity`` may).
    catalogue
        From :func:`read_catalogue`.
    results
        The workload's response model: its ``measured_engines`` are the speeds scaled.

    Returns
    -------
    dict
        The answer at the published ratios with every band the envelope over the ratios' doubt
        (:func:`envelope`), :data:`END_COLUMNS` at both ends (``_at_ratio_low``, ``_at_ratio_high``),
        ``processor_from``, ``processor_to``, ``gcp_capacity_ratio``, ``ziip_capacity_ratio``,
        ``capacity_ratio_doubt_pct``, ``processor_citations`` and, in ``warnings``, the ends' own
        warnings (a saturated end named), the ratios used and IBM's caveat.

    Raises
    ------
    ProcessorError
        No catalogue, no response model, a malformed ``processor``, explicit speeds beside it, an
        unknown model (named, with the known ones) or figures that do not compare.
    """
    if catalogue is None:
        raise ProcessorError("the scenario names a processor change but no processor catalogue was given")
    if results is None:
        raise ProcessorError("a processor change is answered by a response model on engines (closed_mva, "
                             "open_dispatch); this workload has none")
    given = [k for k in ("gcp_speed", "ziip_speed") if scenario.get(k) is not None]
    if given:
        raise ProcessorError(f"processor sets the engine speeds: leave out {', '.join(given)}")
    source_id, target_id, doubt = processor_spec(scenario["processor"])
    change = capacity_change(source_id, target_id, catalogue)
    measured = dict(getattr(results, "measured_engines", None) or {})
    base = {k: v for k, v in scenario.items() if k != "processor"}
    point = ask({**base, **change.engines(measured)})
    ends = [ask({**base, **change.engines(measured, s)}) for s in (1.0 - doubt, 1.0 + doubt)] if doubt else []
    out = envelope(point, ends)
    for column in END_COLUMNS:
        for end, row in zip(("low", "high"), ends or [point, point]):
            if column in point:
                out[f"{column}_at_ratio_{end}"] = row.get(column)
    warnings = [w for w in (out.get("warnings") or "").split(WARNINGS_SEPARATOR) if w]
    for end, row in zip(("low", "high"), ends):  # what qualifies an end's answer qualifies the envelope
        if row.get("status") == SATURATED and point.get("status") != SATURATED:
            warnings.append(f"at the ratio's {end} end: {row.get('status_message')} (the band has no top)")
        warnings += [f"at the ratio's {end} end: {w}" for w in (row.get("warnings") or "").split(WARNINGS_SEPARATOR)
                     if w and w not in warnings]
    span = (f"{change.gcp_ratio * (1 - doubt):.3g}-{change.gcp_ratio * (1 + doubt):.3g}" if doubt and
            change.source != change.target else f"{change.gcp_ratio:.3g}")
    warnings.append(f"processor {source_id} -> {target_id}: GCP capacity x {change.gcp_ratio:.3g}, zIIP x "
                    f"{change.ziip_ratio:.3g} (one-CP figures as published, taken per engine), the band the "
                    f"envelope of the answers with the GCP ratio at {span} (ratio_doubt_pct {100 * doubt:g})")
    if len(change.sources) > 1:
        warnings.append(f"the figures of {source_id} and {target_id} come from different publications "
                        f"({', '.join(sorted(change.sources))})")
    warnings.append(_fit_warning(change, measured, catalogue, doubt))
    warnings.append(f'IBM: "{catalogue.caveat}" ({catalogue.caveat_citation})')
    out.update(processor_from=source_id, processor_to=target_id, gcp_capacity_ratio=change.gcp_ratio,
               ziip_capacity_ratio=change.ziip_ratio, capacity_ratio_doubt_pct=100.0 * doubt,
               processor_citations=" | ".join(change.citations),
               warnings=WARNINGS_SEPARATOR.join(w.replace(WARNINGS_SEPARATOR, ", ") for w in warnings if w))
    return out
