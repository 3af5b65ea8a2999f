"""What ``kneecap forecast`` prints about its answers: the summary table and one line per finding.

Pure functions of the forecast table (:func:`kneecap.forecasting.forecast`'s rows): the zIIP plan's
binding rule, saturated scenarios, warnings, extrapolation, model caveats, a WLM class's knee and
date, the band's calibration and structures, what factors changed. The CLI prints them; the
capacity report and the tests read the same sentences.
"""

from __future__ import annotations

import math


def summary_text(summary) -> str:
    """The answers as a left-aligned text table; a column no scenario has a value in is left out.

    ``notes`` comes last and unpadded, so a long warning wraps in the terminal without widening
    every row.
    """
    shown = [c for c in summary.columns if c in ("scenario", "status") or (~summary[c].isin(("-", ""))).any()]
    widths = {c: max([len(c), *(len(v) for v in summary[c])]) for c in shown}
    def line(cells: dict) -> str:
        return "  ".join(str(cells[c]).ljust(widths[c]) if c != shown[-1] else str(cells[c]) for c in shown)

    return "\n".join([line({c: c for c in shown}), *(line(r) for r in summary.to_dict("records"))])


def plan_lines(table) -> list[str]:
    """One line per scenario with a zIIP plan: the rule that decided it, with its numbers."""
    if "binding_sentence" not in table:
        return []
    planned = table[table["binding_sentence"].notna() & table["error"].isna()]
    return [f"forecast: {row['workload']} / {row['scenario'] or '-'}: zIIP plan: {row['binding_sentence']}"
            for _, row in planned.iterrows()]


def saturated_lines(table) -> list[str]:
    """One line per scenario past what its configuration carries (``status`` saturated)."""
    from kneecap.forecasting import SATURATED

    if "status" not in table:
        return []
    past = table[table["status"] == SATURATED]
    return [f"forecast: {row['workload']} / {row['scenario'] or '-'}: saturated: {row['status_message']}"
            for _, row in past.iterrows()]


def warning_sentences(row) -> list[str]:
    """The warnings of one answer: its ``warnings`` cell split at :data:`kneecap.forecasting.WARNINGS_SEPARATOR`."""
    from kneecap.forecasting import WARNINGS_SEPARATOR

    text = row.get("warnings")
    return [w for w in str(text).split(WARNINGS_SEPARATOR) if w] if isinstance(text, str) else []


def caution_sentences(row) -> list[str]:
    """What qualifies one answer, as ``kneecap forecast`` prints it under the answer.

    Its saturation message (``status`` saturated), each warning (:func:`warning_sentences`) and the
    model's known distance from the dispatcher there (``model_caveat``); the capacity report lists
    the same sentences.
    """
    from kneecap.forecasting import SATURATED

    found = [str(row["status_message"])] if row.get("status") == SATURATED else []
    found += warning_sentences(row)
    if row.get("model_caveat"):
        found.append(str(row["model_caveat"]))
    return found


def warning_lines(table) -> list[str]:
    """One line per warning of each answered scenario (``warnings``, :func:`kneecap.forecasting.answer_warnings`)."""
    if "warnings" not in table:
        return []
    warned = table[table["warnings"].notna() & table["error"].isna()]
    return [f"forecast: {row['workload']} / {row['scenario'] or '-'}: warning: {warning}"
            for _, row in warned.iterrows() for warning in warning_sentences(row)]


def extrapolation_lines(table) -> list[str]:
    """One line per scenario asked beyond the load its model was fitted on, up to where that is a warning.

    Beyond :data:`kneecap.forecasting.EXTRAPOLATION_WARN_X` times the trained load the row's
    ``warnings`` say it (:func:`warning_lines`).
    """
    from kneecap.forecasting import EXTRAPOLATION_WARN_X

    if "extrapolation_x" not in table:
        return []
    beyond = table[table["extrapolation_x"].gt(1.0) & table["extrapolation_x"].le(EXTRAPOLATION_WARN_X)
                   & table["error"].isna()]
    return [f"forecast: {row['workload']} / {row['scenario'] or '-'}: extrapolating, {row['extrapolation']}"
            for _, row in beyond.iterrows()]


def caveat_lines(table) -> list[str]:
    """One line per scenario whose model is known to be far from the dispatcher there (``model_caveat``)."""
    if "model_caveat" not in table:
        return []
    flagged = table[table["model_caveat"].notna()]
    return [f"forecast: {row['workload']} / {row['scenario'] or '-'}: caution, {row['model_caveat']}"
            for _, row in flagged.iterrows()]


def class_lines(table) -> list[str]:
    """Per WLM-class scenario: its knee in tps with the interval, and when growth reaches it.

    A ``tps: peak`` scenario's line says first where its load came from (``load_from``).
    """
    from kneecap.forecasting import reach_sentence

    if "knee_tps" not in table:
        return []
    lines = []
    for _, row in table[table["knee_tps"].notna()].iterrows():
        if isinstance(row.get("load_from"), str):  # tps: peak: where the load asked about came from
            lines.append(f"forecast: {row['workload']} / {row['scenario'] or '-'}: load {row['tps']:,.0f} tps, "
                         f"{row['load_from']}")
        line = (f"forecast: {row['workload']} / {row['scenario'] or '-'}: knee {row['knee_tps']:.4g} tps "
                f"[{row['knee_tps_lo']:.4g}, {row['knee_tps_hi']:.4g}] on {row['n_gcp']:g} GCP + "
                f"{row['n_ziip']:g} zIIP")
        if isinstance(row.get("growth"), str) and row["growth"].startswith("no growth"):
            line += f"; {row['growth']}"
        elif isinstance(row.get("peak_date_last"), str):
            line += (f"; daily peak {row['peak_tps_last']:.4g} tps on {row['peak_date_last']}, "
                     + reach_sentence(row, "knee", "knee"))
        lines.append(line)
        lines += goal_lines(row)
    return lines


def _finite(row, *columns: str) -> bool:
    return all(isinstance(row.get(c), float) and math.isfinite(row[c]) for c in columns)


def goal_sentences(row) -> list[str]:
    """A WLM class's response percentiles, its goal's forecast PI and when the PI passes 1, in words.

    From the columns of :func:`kneecap.goal_answers.goal_columns` and, for a percentile or goal
    SLO, the mean it stands for (:func:`kneecap.goal_answers.with_slo`); none for a model without
    a measured response time distribution. ``kneecap forecast`` prints them (:func:`goal_lines`),
    the capacity report lists them.
    """
    from kneecap.forecasting import reach_sentence

    found = []
    if _finite(row, "resp_p90_ms", "tps"):
        parts = [f"p{p} {row[f'resp_p{p}_ms']:.3g} ms ({row[f'resp_p{p}_ms_lo']:.3g}-{row[f'resp_p{p}_ms_hi']:.3g})"
                 for p in (50, 90, 95)]
        found.append(f"response percentiles at {row['tps']:,.0f} tps: " + ", ".join(parts))
    if isinstance(row.get("goal"), str):
        # a multi-period class names its binding period (NaN on a table's row of another class)
        binding = row.get("pi_period")
        several = binding is not None and binding == binding
        words = f"WLM goal{'s' if several else ''} {row['goal']}:"
        if _finite(row, "pi"):
            words += f" PI {row['pi']:.2f} ({row['pi_lo']:.2f}-{row['pi_hi']:.2f}) at {row['tps']:,.0f} tps;"
        if _finite(row, "pi_tps"):
            band = (f" [{row['pi_tps_lo']:.4g}, {row['pi_tps_hi']:.4g}]" if _finite(row, "pi_tps_lo", "pi_tps_hi")
                    else "")
            words += f" PI passes 1 at {row['pi_tps']:.4g} tps{band}"
            if "date_pi" in row and ("date_pi_earliest" in row or row.get("pi_already")):
                words += ", " + reach_sentence(row, "pi", "PI 1")
        else:
            words += " PI stays under 1 up to 95 % of saturation"
        if several:
            words += f" (period {int(binding)} binds; " + "; ".join(_period_words(row)) + ")"
        found.append(words)
    if isinstance(row.get("slo"), str) and _finite(row, "slo_resp_ms") and not row["slo"].startswith("mean"):
        found.append(f"SLO {row['slo']}: met while the mean response is <= {row['slo_resp_ms']:.3g} ms "
                     "(the plan and the SLO's date use that mean)")
    return found


def _period_words(row) -> list[str]:
    """Each period's PI at the load and the load its PI passes 1 (the ``_p<N>`` columns of a multi-period class)."""
    # a mapping or a table's row (a Series iterates its values: its labels are its keys)
    periods = sorted({int(c[8:]) for c in row.keys() if str(c).startswith("pi_tps_p") and c[8:].isdigit()})
    out = []
    for p in periods:
        said = f"period {p}"
        if _finite(row, f"pi_p{p}"):
            said += f" PI {row[f'pi_p{p}']:.2f} ({row[f'pi_lo_p{p}']:.2f}-{row[f'pi_hi_p{p}']:.2f})"
        said += (f" passes 1 at {row[f'pi_tps_p{p}']:.4g} tps" if _finite(row, f"pi_tps_p{p}")
                 else " stays under 1")
        out.append(said)
    return out


def goal_lines(row) -> list[str]:
    """:func:`goal_sentences` as ``kneecap forecast`` prints them, one line each."""
    return [f"forecast: {row['workload']} / {row['scenario'] or '-'}: {s}" for s in goal_sentences(row)]


def band_lines(table) -> list[str]:
    """Per scenario: how the band held out on the model's own data; for a WLM class also its structures.

    A WLM class: the response with its band, how the band was calibrated and what it covered on the
    class's own later days, and the dispatcher structures it carries with their weights. A closed
    workload: how often the band held its own table's higher client counts, refitted without them.
    """
    if "band_calibration" not in table:
        return []
    lines = []
    for _, row in table[table["band_calibration"].notna() & table["error"].isna()].iterrows():
        head = f"forecast: {row['workload']} / {row['scenario'] or '-'}:"
        is_class = isinstance(row.get("structures"), str)
        if is_class and all(isinstance(row.get(c), float) and math.isfinite(row[c]) for c in ("resp_ms", "tps")):
            lines.append(f"{head} response {row['resp_ms']:.3g} ms (95 % band {row['resp_ms_lo']:.3g}-"
                         f"{row['resp_ms_hi']:.3g} ms) at {row['tps']:,.0f} tps")
        lines.append(f"{head} band: {row['band_calibration']}")
        if is_class:
            lines.append(f"{head} structures: {row['structures']}")
    return lines


def factor_lines(table) -> list[str]:
    """One line per scenario answered with factors: each answer unadjusted -> adjusted."""
    if "factors" not in table:
        return []
    def show(value: float, fmt: str) -> str:
        return "none" if value is None or value != value else fmt.format(value)

    lines = []
    for _, row in table[table["factors"].notna() & table["error"].isna()].iterrows():
        parts = []
        for label, col, fmt in (("CPU demand ms/tran", "demand_ms_per_tran", "{:.4g}"),
                                ("cost ms/tran", "cpu_ms_per_tran", "{:.4g}"),
                                ("knee clients", "knee_clients", "{:.0f}"),
                                ("response ms", "resp_ms", "{:.3g}"),
                                ("zIIPs", "recommended_n_ziip", "{:.0f}")):
            if col in row and f"{col}_adjusted" in row and row.notna()[col]:
                parts.append(f"{label} {show(row[col], fmt)} -> {show(row[f'{col}_adjusted'], fmt)}")
        lines.append(f"forecast: {row['workload']} / {row['scenario']}: with {row['factors']}: " + "; ".join(parts))
    return lines


def msu_lines(table) -> list[str]:
    """One line per SMF class scenario priced in MSU (``kneecap forecast``'s ``msu_*`` columns)."""
    if "msu_peak_r4ha" not in table:
        return []
    lines = []
    for _, row in table[table["msu_peak_r4ha"].notna()].iterrows():
        lac = f"SMF70LAC {row['msu_peak_lac']:.4g}" if row["msu_peak_lac"] == row["msu_peak_lac"] else "no SMF70LAC"
        line = (f"forecast: {row['workload']} / {row['scenario'] or '-'}: MSU on {row['msu_system_id']}: peak R4HA "
                f"{row['msu_peak_r4ha']:.4g} MSU/h at {row['msu_peak_hour']} ({lac}); "
                f"zIIP-eligible work on GCPs {row['msu_eligible_on_gcp_at_peak']:.3g} MSU/h of it; one more zIIP "
                f"removes {row['msu_saved_one_ziip']:.3g} [{row['msu_saved_one_ziip_lo']:.3g}, "
                f"{row['msu_saved_one_ziip_hi']:.3g}] MSU/h from the peak")
        if isinstance(row.get("msu_forecast_date"), str):
            line += (f"; peak R4HA {row['msu_peak_r4ha_forecast']:.4g} [{row['msu_peak_r4ha_forecast_lo']:.4g}, "
                     f"{row['msu_peak_r4ha_forecast_hi']:.4g}] at the load forecast for {row['msu_forecast_date']}")
        lines.append(line)
        # how the figures were reached, and where they are held (a forecast peak at what the GCPs carry has
        # a band of no width): the desk shows the same note under its MSU figures
        if isinstance(row.get("msu_note"), str) and row["msu_note"]:
            lines.append(f"forecast: {row['workload']} / {row['scenario'] or '-'}: MSU: {row['msu_note']}")
    return lines
