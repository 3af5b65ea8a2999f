"""The engine planner: the cheapest zIIP + GCP mix that keeps response time within the SLO."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kneecap.config import PlannerConfig
from kneecap.modeling.base import to_jsonable
from kneecap.modeling.knee import KNEE_K


@dataclass(frozen=True)
class PlannerPolicy(PlannerConfig):
    """How the planner judges a configuration (params.yaml ``planner``, plus ``train.knee_k``).

    ``max_ziip_busy_pct`` caps busy per zIIP and ``max_spill_pct`` the share of eligible work that
    runs on GCPs (IIPCP); IBM publishes no numeric zIIP busy limit, so both are the planner's
    choice. ``ziip_cost`` / ``gcp_cost`` are the relative prices of one engine of each kind (only
    their ratio matters); a tie goes to zIIPs. ``max_added_gcp`` bounds the GCPs the planner may add
    to the configuration asked about. ``conservative`` requires the band's upper end, not the
    prediction, to meet the SLO. The fields and their defaults are those of
    :class:`kneecap.config.PlannerConfig` and ``knee_k`` of :class:`kneecap.config.TrainConfig`,
    written once there; this class adds the checks.
    """

    knee_k: float = KNEE_K

    def __post_init__(self) -> None:
        if self.max_n_ziip < 0 or self.max_added_gcp < 0:
            raise ValueError("max_n_ziip and max_added_gcp must be >= 0")
        if self.max_n_ziip > 256 or self.max_added_gcp > 256:
            raise ValueError("max_n_ziip and max_added_gcp must be <= 256 (an LPAR's logical processors)")
        if not (self.ziip_cost >= 0 and self.gcp_cost >= 0):
            raise ValueError(f"engine costs must be >= 0, got zIIP {self.ziip_cost}, GCP {self.gcp_cost}")


@dataclass(frozen=True)
class ZiipPlan:
    """Answer of :func:`plan_ziip`.

    ``table`` has one row per candidate ``n_ziip`` at the GCP count asked about, with the predicted
    response (and bounds), TPS, busy per zIIP and per GCP (what each pool runs, GCP help included),
    the share of eligible work on GCPs (``ziip_eligible_on_gcp_share_pct``) and its APPL% IIPCP, which
    tests it passes and ``failed_rules``, the rules it fails (:data:`RULES`, comma-separated, empty
    when it passes). ``n_ziip`` / ``n_gcp_recommended`` are the cheapest mix that passes (``None``
    when no mix within the policy does); ``margin_ms`` is SLO minus the judged response of that mix.
    ``binding_rule`` names the rule(s) that decided the answer and ``binding_sentence`` says it with
    the numbers (:func:`plan_ziip`, Notes); ``binding_rule`` is None when no rule turned a cheaper mix
    away.
    """

    n_ziip: int | None
    margin_ms: float | None
    slo_resp_ms: float
    clients: float
    think_time_ms: float
    n_gcp: int
    policy: dict[str, Any]
    table: pd.DataFrame
    reason: str
    n_gcp_recommended: int | None = None
    unloaded_resp_ms: float | None = None
    tps: float | None = None
    binding_rule: str | None = None
    binding_sentence: str = ""

    @property
    def added_gcp(self) -> int | None:
        """GCPs to add to the ``n_gcp`` asked about, or None when no mix passes."""
        return None if self.n_gcp_recommended is None else self.n_gcp_recommended - self.n_gcp

    def to_dict(self) -> dict[str, Any]:
        """The plan as plain JSON-ready values, ``table`` as a list of rows."""
        return to_jsonable({
            "n_ziip": self.n_ziip, "n_gcp_recommended": self.n_gcp_recommended, "added_gcp": self.added_gcp,
            "margin_ms": self.margin_ms, "slo_resp_ms": self.slo_resp_ms, "clients": self.clients,
            "tps": self.tps,
            "think_time_ms": self.think_time_ms, "n_gcp": self.n_gcp, "unloaded_resp_ms": self.unloaded_resp_ms,
            "policy": self.policy, "reason": self.reason, "binding_rule": self.binding_rule,
            "binding_sentence": self.binding_sentence, "table": self.table.to_dict(orient="records"),
        })


_PLAN_COLUMNS = ("resp_ms", "resp_ms_lo", "resp_ms_hi", "tps", "ziip_busy_pct", "gcp_busy_pct",
                 "ziip_eligible_on_gcp_share_pct", "ziip_eligible_on_gcp_pct")


#: The rules a mix is judged by, in the order a sentence names them: the response-time SLO, the
#: busy cap per zIIP (``max_ziip_busy_pct``) and the cap on eligible work run by GCPs (``max_spill_pct``).
SLO_RULE, ZIIP_BUSY_RULE, SPILL_RULE = "slo", "ziip_busy", "eligible_on_gcp"
RULES = (SLO_RULE, ZIIP_BUSY_RULE, SPILL_RULE)


def _load_words(clients: float | None, tps: float | None) -> str:
    return f"{clients:g} clients" if clients is not None else f"{tps:.4g} tps"


def _judge(results: Any, frame: pd.DataFrame, slo_resp_ms: float, policy: PlannerPolicy) -> pd.DataFrame:
    pred = results.predict(frame)
    table = pd.concat([frame[["n_gcp", "n_ziip"]].reset_index(drop=True),
                       pred[list(_PLAN_COLUMNS)].reset_index(drop=True)], axis=1)
    judged = table["resp_ms_hi"] if policy.conservative else table["resp_ms"]
    passes = {SLO_RULE: judged <= slo_resp_ms,
              ZIIP_BUSY_RULE: pd.Series(True, index=table.index), SPILL_RULE: pd.Series(True, index=table.index)}
    if policy.max_ziip_busy_pct is not None:
        passes[ZIIP_BUSY_RULE] = table["ziip_busy_pct"].fillna(0.0) <= policy.max_ziip_busy_pct
    if policy.max_spill_pct is not None:
        passes[SPILL_RULE] = table["ziip_eligible_on_gcp_share_pct"] <= policy.max_spill_pct
    table["meets_slo"] = passes[SLO_RULE]
    table["meets_policy"] = passes[ZIIP_BUSY_RULE] & passes[SPILL_RULE]
    table["failed_rules"] = [", ".join(rule for rule in RULES if not passes[rule][i]) for i in table.index]
    return table


def _engines(n_ziip: int, n_gcp: int | None = None) -> str:
    """``'1 zIIP'``, ``'3 zIIPs'``, or with the GCPs ``'2 zIIPs and 3 GCPs'``."""
    words = f"{n_ziip} zIIP{'' if n_ziip == 1 else 's'}"
    return words if n_gcp is None else f"{words} and {n_gcp} GCP{'' if n_gcp == 1 else 's'}"


def _failed_words(row: pd.Series, rules: list[str], slo_resp_ms: float, policy: PlannerPolicy,
                  singular: bool | None = None) -> str:
    """What a mix does against each rule in ``rules``, with its numbers: the SLO first, then the policy.

    A mix that meets the SLO while failing a policy rule is said to meet it, with its response,
    so that the sentence shows what the policy turned away. The verbs agree with the mix's zIIPs
    (the sentence's subject), or with ``singular`` when it is given (the subject is "the mix").
    """
    one = int(row["n_ziip"]) == 1 if singular is None else singular

    def verb(word: str) -> str:
        return f"{word}es" if one and word.endswith("s") else f"{word}s" if one else word

    judged = float(row["resp_ms_hi"] if policy.conservative else row["resp_ms"])
    which = "band top " if policy.conservative else ""
    if SLO_RULE in rules:
        shown = "saturated" if math.isinf(judged) else f"{which}{judged:.3g} ms > {slo_resp_ms:g} ms"
        slo = f"{verb('miss')} the SLO ({shown})"
    else:
        slo = f"{verb('meet')} the SLO ({which}{judged:.3g} ms)"
    words = []
    if ZIIP_BUSY_RULE in rules:
        # a whole per cent would print a busy just over the policy as the policy itself (80.3 -> 80)
        words.append(f"{verb('run')} {row['ziip_busy_pct']:.1f} % zIIP busy "
                     f"(policy <= {policy.max_ziip_busy_pct:g} %)")
    if SPILL_RULE in rules:
        words.append(f"{verb('put')} {row['ziip_eligible_on_gcp_share_pct']:.1f} % of eligible work on GCPs "
                     f"(policy <= {policy.max_spill_pct:g} %)")
    if SLO_RULE in rules:
        return " and ".join([slo, *words])
    return f"{slo} but {' and '.join(words)}" if words else f"{slo} and the policy"


def _rules(row: pd.Series) -> list[str]:
    return [r for r in str(row["failed_rules"]).split(", ") if r]


def mix_verdicts(table: pd.DataFrame, slo_resp_ms: float, policy: PlannerPolicy) -> list[str]:
    """Each judged mix of a plan's ``table`` in words, with its numbers, as the binding sentence says it.

    ``'misses the SLO (4.92 ms > 2 ms) and runs 94.5 % zIIP busy (policy <= 80 %)'``, ``'meets the
    SLO (1.13 ms) and the policy'``: the row's mix is the subject, so a reader of the table sees why
    a row was turned away without decoding rule names. ``slo_resp_ms`` and ``policy``: those the
    plan was judged by.
    """
    return [_failed_words(row, _rules(row), slo_resp_ms, policy, singular=True) for _, row in table.iterrows()]


def plan_answer(plan: ZiipPlan, slo_resp_ms: float, policy: PlannerPolicy) -> dict[str, Any]:
    """A plan as the desk shows it: the mix, why, the binding rule, the margin, the judged table.

    ``n_ziip``, ``n_gcp`` (recommended), ``reason``, ``binding_rule``, ``binding_sentence``,
    ``margin_ms`` and ``table``, the plan's table with each row's ``verdict`` in words
    (:func:`mix_verdicts`), so that a rejected mix says why beside its rule names.
    """
    return {"n_ziip": plan.n_ziip, "n_gcp": plan.n_gcp_recommended, "reason": plan.reason,
            "binding_rule": plan.binding_rule, "binding_sentence": plan.binding_sentence,
            "margin_ms": plan.margin_ms,
            "table": plan.table.assign(verdict=mix_verdicts(plan.table, slo_resp_ms, policy))}


def _binding(tables: dict[int, pd.DataFrame], n: int, added: int, n_gcp: int, slo_resp_ms: float,
             policy: PlannerPolicy) -> tuple[str | None, str]:
    """The rule(s) that turned away the next cheaper mix, and the sentence naming them.

    The next cheaper mix is one zIIP fewer with the same GCPs, or, for a plan without zIIPs that
    adds GCPs, one GCP fewer.
    """
    chosen = f"{n}" if added == 0 else _engines(n, n_gcp + added)
    same = tables[added]
    if (same["n_ziip"] == n - 1).any():
        fewer, gcps = same[same["n_ziip"] == n - 1].iloc[0], None if added == 0 else n_gcp + added
    elif added > 0 and added - 1 in tables and (tables[added - 1]["n_ziip"] == n).any():
        fewer = tables[added - 1][tables[added - 1]["n_ziip"] == n].iloc[0]
        gcps = n_gcp + added - 1
    else:
        row = same[same["n_ziip"] == n].iloc[0]
        return None, (f"{_engines(n, n_gcp + added)}, the fewest engines judged, "
                      f"{_failed_words(row, [], slo_resp_ms, policy)}: {chosen} recommended")
    rules = _rules(fewer)
    subject = _engines(int(fewer["n_ziip"]), gcps)
    words = _failed_words(fewer, rules, slo_resp_ms, policy)
    return (", ".join(rules) or None), f"{subject} {words}: {chosen} recommended"


def _binding_when_none_passes(tried: pd.DataFrame, n_gcp: int, slo_resp_ms: float, policy: PlannerPolicy,
                              limits: str) -> tuple[str, str]:
    """When no mix passes: the policy rule(s) the cheapest mix meeting the SLO fails, else the SLO."""
    meeting = tried[tried["meets_slo"]]
    if meeting.empty:
        low = tried.loc[tried["resp_ms"].idxmin()]
        return SLO_RULE, (f"no mix of {limits} meets the SLO {slo_resp_ms:g} ms: the lowest predicted response is "
                          f"{low['resp_ms']:.3g} ms, with {_engines(int(low['n_ziip']), int(low['n_gcp']))}")
    cost = meeting["n_ziip"] * policy.ziip_cost + (meeting["n_gcp"] - n_gcp) * policy.gcp_cost
    row = meeting.assign(_cost=cost).sort_values(["_cost", "n_gcp", "n_ziip"], kind="stable").iloc[0]
    rules = _rules(row)
    n = int(row["n_ziip"])
    gcps = None if int(row["n_gcp"]) == n_gcp else int(row["n_gcp"])
    return (", ".join(rules), f"{_engines(n, gcps)} {_failed_words(row, rules, slo_resp_ms, policy)}; "
                              f"no mix of {limits} meets both")


def plan_ziip(
    results: Any,
    *,
    clients: float | None = None,
    think_time_ms: float = 0.0,
    n_gcp: int,
    slo_resp_ms: float,
    policy: PlannerPolicy | None = None,
    min_n_ziip: int = 0,
    tps: float | None = None,
    lpar: dict[str, float] | None = None,
) -> ZiipPlan:
    """The cheapest zIIP + GCP mix that meets the SLO and the policy, from what the model predicts.

    Parameters
    ----------
    results : a fitted closed-workload model (load in ``clients``), or an open one such as a WLM
        class's :class:`~kneecap.modeling.open_dispatch.OpenDispatchResults` (load in ``tps``).
    clients, think_time_ms, n_gcp : the load and the GCPs the LPAR has now.
    tps : the class's arrival rate, for an open model (instead of ``clients``).
    lpar : other columns every judged row carries (an open class's ``bg_gcp_busy_pct`` /
        ``bg_ziip_busy_pct``: the other classes' load the engines must also carry).
    slo_resp_ms : response-time objective; met when the prediction (or, with
        ``policy.conservative``, the upper prediction bound) is at or below it.
    policy : caps, engine costs and how many GCPs may be added (:class:`PlannerPolicy`).

    Notes
    -----
    Every mix ``n_ziip`` in ``min_n_ziip..max_n_ziip`` with ``n_gcp + g`` GCPs, ``g`` in
    ``0..max_added_gcp``, is judged by the same model the knee comes from; the answer minimises
    ``n_ziip * ziip_cost + g * gcp_cost``, ties going to fewer added GCPs. Response never falls
    below the unloaded response ``R(1) = D + R0`` whatever the engines: an SLO under it is
    reported as unreachable rather than answered with an engine count. Feasibility is not monotone
    from 0 to 1 zIIP (a lone zIIP can queue eligible work that GCPs would have run at once), so every
    count is judged rather than searched by bisection.

    The binding rule is what turned away the next cheaper mix (one zIIP fewer with the same GCPs;
    for a plan of GCPs alone, one GCP fewer): e.g. ``"ziip_busy"`` with "2 zIIPs meet the SLO
    (4.63 ms) but run 92.4 % zIIP busy (policy <= 80 %): 3 recommended", or ``"slo"`` when that mix
    misses the SLO. When no mix passes it is the policy rule(s) the cheapest mix meeting the SLO
    fails, or ``"slo"`` when none meets it.
    """
    policy = policy or PlannerPolicy()
    if slo_resp_ms <= 0:
        raise ValueError(f"slo_resp_ms must be > 0, got {slo_resp_ms}")
    if (clients is None) == (tps is None):
        raise ValueError("give the load as clients (closed model) or tps (open model), not both")
    if clients is not None and clients < 1:
        raise ValueError(f"clients must be >= 1, got {clients}")
    if tps is not None and not (math.isfinite(tps) and tps > 0):
        raise ValueError(f"tps must be > 0, got {tps}")
    if n_gcp < 1:
        raise ValueError(f"n_gcp must be >= 1, got {n_gcp}")
    counts = np.arange(int(min_n_ziip), int(policy.max_n_ziip) + 1)
    extra = dict(lpar or {})
    # the load, and the unloaded point: one client, or a vanishing arrival rate (the other classes still there)
    if clients is not None:
        load = {"clients": float(clients), "think_time_ms": float(think_time_ms)}
        low = {"clients": 1.0, "think_time_ms": float(think_time_ms)}
    else:
        assert tps is not None  # exactly one of clients and tps is given (checked above)
        load = {"tps": float(tps)}
        low = {"tps": 1e-9 * float(tps)}
    frame = pd.DataFrame({**load, **extra, "n_gcp": int(n_gcp), "n_ziip": counts})
    table = _judge(results, frame, slo_resp_ms, policy)
    base = dict(slo_resp_ms=slo_resp_ms, clients=math.nan if clients is None else clients,
                think_time_ms=think_time_ms, n_gcp=n_gcp, tps=tps,
                policy=to_jsonable(policy.__dict__), table=table)
    # at the fewest zIIPs; on engines not all alike (kneecap.modeling.engines.on_engines) also at the
    # most, as a zIIP may run eligible work faster than a GCP: the floor is the least of the two
    ends = [max(int(min_n_ziip), 0)]
    if getattr(results, "_engines", None):
        ends.append(max(int(policy.max_n_ziip), ends[0]))
    ones = results.predict(pd.DataFrame([{**low, **extra, "n_gcp": int(n_gcp), "n_ziip": n} for n in ends]))
    unloaded = float((ones["resp_ms_hi"] if policy.conservative else ones["resp_ms"]).min())
    if unloaded > slo_resp_ms:
        return ZiipPlan(None, None, reason=(f"no engine count can meet the SLO: unloaded response {unloaded:.3g} ms "
                                            f"> SLO {slo_resp_ms:g} ms (CPU {results.cpu_ms_per_tran:.3g} ms + "
                                            f"other delay {results.delay_ms:.3g} ms per transaction; engines only "
                                            f"remove queueing)"), unloaded_resp_ms=unloaded,
                        binding_rule=SLO_RULE,
                        binding_sentence=(f"the SLO {slo_resp_ms:g} ms is below the unloaded response "
                                          f"{unloaded:.3g} ms: no engine count meets it"), **base)
    best: tuple[float, int, int, pd.Series] | None = None
    tables = {0: table}
    for added in range(0, int(policy.max_added_gcp) + 1):
        if best is not None and added * policy.gcp_cost > best[0]:
            break
        if added not in tables:
            affordable = counts[counts * policy.ziip_cost + added * policy.gcp_cost <= (best[0] if best else np.inf)]
            if not len(affordable):
                continue
            tables[added] = _judge(results, frame.iloc[: len(affordable)].assign(n_gcp=int(n_gcp) + added),
                                   slo_resp_ms, policy)
        ok = tables[added][tables[added]["meets_slo"] & tables[added]["meets_policy"]]
        if ok.empty:
            continue
        row = ok.iloc[0]
        cost = float(row["n_ziip"] * policy.ziip_cost + added * policy.gcp_cost)
        if best is None or cost < best[0]:
            best = (cost, int(row["n_ziip"]), added, row)
    if best is None:
        tried = pd.concat(tables.values(), ignore_index=True)
        low = tried.loc[tried["resp_ms"].idxmin()]
        limits = f"up to {policy.max_n_ziip} zIIPs and {n_gcp + policy.max_added_gcp} GCPs"
        rule, sentence = _binding_when_none_passes(tried, n_gcp, slo_resp_ms, policy, limits)
        return ZiipPlan(None, None, reason=(
            f"no mix of {limits} meets the SLO "
            f"{slo_resp_ms:g} ms and the policy at {_load_words(clients, tps)}; the lowest predicted response is "
            f"{low['resp_ms']:.3g} ms with {int(low['n_ziip'])} zIIPs and {int(low['n_gcp'])} GCPs "
            f"(zIIP busy {low['ziip_busy_pct']:.0f}%, {low['ziip_eligible_on_gcp_share_pct']:.1f}% of eligible work "
            "on GCPs)"),
            unloaded_resp_ms=unloaded, binding_rule=rule, binding_sentence=sentence, **base)
    _, n, added, row = best
    judged = float(row["resp_ms_hi"] if policy.conservative else row["resp_ms"])
    more = f" and {added} more GCP(s) ({n_gcp + added} in all)" if added else f" with {n_gcp} GCP(s)"
    busy = "" if n == 0 else f"zIIPs {row['ziip_busy_pct']:.0f}% busy, "
    reason = (f"{n} zIIP(s){more}: predicted {row['resp_ms']:.3g} ms (band {row['resp_ms_lo']:.3g}-"
              f"{row['resp_ms_hi']:.3g}) vs SLO {slo_resp_ms:g} ms, {busy}"
              f"{row['ziip_eligible_on_gcp_share_pct']:.1f}% of eligible work on GCPs")
    binding_rule, binding_sentence = _binding(tables, n, added, n_gcp, slo_resp_ms, policy)
    return ZiipPlan(n, float(slo_resp_ms - judged), n_gcp_recommended=int(n_gcp + added), unloaded_resp_ms=unloaded,
                    reason=reason, binding_rule=binding_rule, binding_sentence=binding_sentence, **base)


def plan_smt(results: Any, *, mt_capacity: float, **plan: Any) -> dict[str, ZiipPlan]:
    """The zIIP plan with the zIIPs in MT-1 and in SMT-2: "n zIIPs in MT-1" against "m zIIP cores in MT-2".

    ``results`` is a dispatch model, a closed workload's or a WLM class's
    (:func:`kneecap.modeling.engines.on_engines`; its engine speeds are kept, and MT-2 it was
    asked on or measured on is not: the MT-1 plan is in MT-1), ``mt_capacity`` the zIIPs' MT-2
    capacity factor (R723MCFS / 1024 measured in MT-2:
    :func:`kneecap.modeling.engines.mt_capacity_from_smf72`), ``plan`` the keywords of
    :func:`plan_ziip`. Returns the plans ``mt1`` and ``mt2`` (zIIPs counted in cores).
    """
    from kneecap.modeling.engines import on_engines

    speeds = {k: v for k, v in (getattr(results, "_engines", None) or {}).items()
              if k not in ("ziip_mt", "ziip_mt_capacity")}
    # a class measured in SMT-2 answers in SMT-2 unless asked for MT-1
    if int((getattr(results, "measured_engines", None) or {}).get("ziip_mt", 1)) == 2:
        speeds["ziip_mt"] = 1
    mt1 = on_engines(results, **speeds) if speeds or getattr(results, "_engines", None) else results
    mt2 = on_engines(results, **speeds, ziip_mt=2, ziip_mt_capacity=float(mt_capacity))
    return {"mt1": plan_ziip(mt1, **plan), "mt2": plan_ziip(mt2, **plan)}


def smt_sentence(plans: dict[str, ZiipPlan], mt_capacity: float) -> str:
    """:func:`plan_smt`'s answer in words: ``'3 zIIPs in MT-1, or 2 zIIP cores in SMT-2 (MT capacity factor 1.3)'``."""
    def said(plan: ZiipPlan, unit: str) -> str:
        if plan.n_ziip is None:
            return f"no {unit} count meets the SLO and the policy"
        return f"{plan.n_ziip} {unit}{'' if plan.n_ziip == 1 else 's'}"

    return (f"{said(plans['mt1'], 'zIIP')} in MT-1, or {said(plans['mt2'], 'zIIP core')} in SMT-2 "
            f"(MT capacity factor {mt_capacity:g})")


def smt_answer(results: Any, mt_capacity: float, **plan: Any) -> dict[str, Any]:
    """:func:`plan_smt`'s answer as the desk shows it: its sentence and both counts.

    ``sentence`` (:func:`smt_sentence`), ``mt1_n_ziip`` and ``mt2_n_ziip`` (zIIPs in MT-1, zIIP
    cores in SMT-2; None where no count meets the SLO and the policy).
    """
    plans = plan_smt(results, mt_capacity=mt_capacity, **plan)
    return {"sentence": smt_sentence(plans, mt_capacity), "mt1_n_ziip": plans["mt1"].n_ziip,
            "mt2_n_ziip": plans["mt2"].n_ziip}


def years_to_reach(current: float, target: float, growth_pct_per_year: float) -> float:
    """Years until a load growing ``growth_pct_per_year`` (compound) reaches ``target``.

    ``log(target / current) / log(1 + g)``; 0 when already there, ``inf`` without growth.
    """
    if current <= 0:
        raise ValueError(f"current load must be > 0, got {current}")
    if target <= current:
        return 0.0
    g = growth_pct_per_year / 100.0
    if g <= 0:
        return math.inf
    return math.log(target / current) / math.log1p(g)
