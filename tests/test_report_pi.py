"""The capacity report's (and the desk's) measured PI table: local rows per system, and a sysplex row
where a class period ran on more than one system of its sysplex (kneecap.report.content)."""

from __future__ import annotations

import pandas as pd

from kneecap.report.content import class_performance_index, performance_index_summary

AT = pd.date_range("2026-03-02 10:00", periods=3, freq="15min")
GOAL = {"period": 1, "goal_type": "percentile", "goal_percentile": 90, "goal_resp_ms": 5.0, "importance": 2}


def _local(system: str, pis: list[float], sysplex: str = "PLEX1", name: str = "CLS") -> pd.DataFrame:
    return pd.DataFrame({"system_id": system, "sysplex": sysplex, "class_name": name, "interval_start_at": AT,
                         "performance_index": pis, **GOAL})


def _plex(pis: list[float], n_systems: list[int], sysplex: str = "PLEX1", name: str = "CLS") -> pd.DataFrame:
    return pd.DataFrame({"sysplex": sysplex, "class_name": name, "interval_start_at": AT, "performance_index": pis,
                         "n_systems": n_systems, **GOAL})


def test_a_sysplex_row_follows_its_systems_rows_when_the_period_ran_on_more_than_one():
    pi = pd.concat([_local("SYSA", [0.9, 1.0, 1.0]), _local("SYSB", [2.0, 2.0, 1.5])], ignore_index=True)
    table = performance_index_summary(pi, _plex([1.1, 1.4, 1.0], [2, 2, 1]))
    assert table["system_id"].tolist() == ["SYSA", "SYSB", "PLEX1 (2 systems)"]
    assert table["scope"].tolist() == ["local", "local", "sysplex"]
    plex = table.iloc[2]
    assert (plex["intervals"], plex["pi_max"], plex["missed"]) == (3, 1.4, 2)
    assert plex["goal"] == "90 % within 5 ms"


def test_no_sysplex_row_for_a_period_on_one_system_or_without_the_mart():
    pi = _local("SYSA", [0.9, 1.0, 1.0])
    assert performance_index_summary(pi, _plex([0.9, 1.0, 1.0], [1, 1, 1]))["scope"].tolist() == ["local"]
    assert performance_index_summary(pi)["scope"].tolist() == ["local"]


def test_a_class_gets_its_own_rows_and_its_systems_sysplexes():
    marts = {"fct_performance_index": pd.concat([_local("SYSA", [1.0] * 3), _local("SYSZ", [1.0] * 3, "PLEX9"),
                                                 _local("SYSA", [1.0] * 3, name="OTHER")], ignore_index=True),
             "fct_sysplex_performance_index": pd.concat([_plex([1.0] * 3, [2] * 3), _plex([1.0] * 3, [2] * 3, "PLEX9"),
                                                         _plex([1.0] * 3, [2] * 3, name="OTHER")], ignore_index=True)}
    pi, plex = class_performance_index(marts, "CLS", {"SYSA"})
    assert set(pi["system_id"]) == {"SYSA"} and set(pi["class_name"]) == {"CLS"}
    assert set(plex["sysplex"]) == {"PLEX1"} and set(plex["class_name"]) == {"CLS"}
    # marts published before the sysplex PI existed
    pi, plex = class_performance_index({"fct_performance_index": marts["fct_performance_index"]}, "CLS")
    assert len(pi) == 6 and plex.empty
