"""Figures of a fitted response model: its curve and band beside the points it was fitted on.

Pure: each function takes a table from :func:`kneecap.training.fit_plot_tables` and returns a
matplotlib figure (Agg backend, no display); ``kneecap.tracking`` logs them as run artifacts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def _figure() -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")  # headless: training runs on servers and in CI
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.0), dpi=100)
    return fig, fig.add_subplot(1, 1, 1)


def fit_figure(table: pd.DataFrame, *, title: str, load_label: str = "load") -> Any:
    """Response against load: the model's curve with its 95 % band, and the measured points."""
    fig, ax = _figure()
    model = table[table["measured_resp_ms"].isna()]
    ax.fill_between(model["load"], model["model_resp_ms_lo"], model["model_resp_ms_hi"], alpha=0.25,
                    label="model, 95 % band")
    ax.plot(table["load"], table["model_resp_ms"], label="model")
    measured = table[table["measured_resp_ms"].notna()]
    ax.plot(measured["load"], measured["measured_resp_ms"], "o", label="measured")
    ax.set_xlabel(load_label)
    ax.set_ylabel("response, ms")
    ax.set_title(title, fontsize=9)
    ax.legend(loc="upper left", fontsize=8)
    return fig


def residual_figure(table: pd.DataFrame, *, title: str, load_label: str = "load") -> Any:
    """Measured over predicted response, %, at each measured load, around a zero line."""
    fig, ax = _figure()
    measured = table[table["measured_resp_ms"].notna()]
    ax.axhline(0.0, linewidth=0.8, color="grey")
    ax.plot(measured["load"], measured["residual_pct"], "o")
    span = float(np.nanmax(np.abs(measured["residual_pct"]))) if len(measured) else 1.0
    ax.set_ylim(-1.2 * max(span, 1.0), 1.2 * max(span, 1.0))
    ax.set_xlabel(load_label)
    ax.set_ylabel("measured / predicted - 1, %")
    ax.set_title(title, fontsize=9)
    return fig
