"""params.yaml sections: each default is the library's own (config imports no model, so the tests hold them equal)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from kneecap import config, forecasting, growth, policies, training
from kneecap.modeling import ClosedMVAModel, ClosedMVAResults, base, dispatch
from kneecap.modeling.cost import CostModel
from kneecap.modeling.dispatch import Dispatch
from kneecap.modeling.open import OpenMMcModel
from kneecap.modeling.open_dispatch import OpenDispatchModel, OpenDispatchResults
from kneecap.modeling.select import ModelingConfig
from kneecap.modeling.usl import USL_METHODS, USLModel
from kneecap.modeling.ziip import PlannerPolicy

REPO = Path(__file__).resolve().parents[1]


def test_an_empty_params_file_gives_the_librarys_own_defaults() -> None:
    params = config.parse_params({})
    assert policies.planner_policy(params) == PlannerPolicy()
    assert policies.growth_policy(params) == forecasting.GrowthPolicy()
    assert training.modeling_config(params) == ModelingConfig()


def test_each_default_is_written_once_in_its_section() -> None:
    # the planner's and the growth reading's objects are their sections (plus knee_k), not copies
    assert issubclass(PlannerPolicy, config.PlannerConfig) and issubclass(forecasting.GrowthPolicy, config.GrowthConfig)
    section = {f.name for f in fields(config.PlannerConfig)}
    assert {f.name for f in fields(PlannerPolicy)} - section == {"knee_k"}
    assert {f.name for f in fields(forecasting.GrowthPolicy)} == {f.name for f in fields(config.GrowthConfig)}
    assert policies.planner_policy(config.parse_params({"planner": {"max_n_ziip": 6}, "train": {"knee_k": 2.5}})) \
        == PlannerPolicy(max_n_ziip=6, knee_k=2.5)
    with pytest.raises(ValueError, match="growth.horizon must be 1..3650"):
        forecasting.GrowthPolicy(horizon=0)
    # and the fits' defaults are read from train / common: the same objects, not equal copies
    train, common = config.TrainConfig(), config.CommonConfig()
    assert (base.ALPHA, base.SEED, base.N_BOOT) == (common.alpha, common.seed, train.n_boot)
    assert dispatch.HELP_RULES is config.HELP_RULES and USL_METHODS is config.USL_METHODS
    assert ModelingConfig().closed_eligible_bursts is train.closed_eligible_bursts
    # a float written again elsewhere would be another object (ints and short strings are shared)
    for read, written in ((ModelingConfig.alpha, common.alpha), (ModelingConfig.help_wait_ms, train.help_wait_ms),
                          (ModelingConfig.ziip_eligible_fraction, train.assumed_ziip_eligible_fraction),
                          (ModelingConfig.max_cv_error_pct, train.max_cv_error_pct),
                          (ModelingConfig.open_min_transactions, train.open_min_transactions),
                          (ModelingConfig.combine_weight_power, train.combine_weight_power),
                          (PlannerPolicy.max_ziip_busy_pct, config.PlannerConfig.max_ziip_busy_pct)):
        assert read is written, (read, written)
    for model in (USLModel, CostModel, OpenMMcModel):
        assert model.alpha is common.alpha, model
    # the knee rule's k where a caller gives none, and the growth reading's peak per period
    for knee in (ClosedMVAResults.knee, ClosedMVAResults.knee_by_structure, OpenDispatchResults.knee):
        assert knee.__kwdefaults__["k"] is train.knee_k, knee
    assert growth.peak_series.__kwdefaults__["freq"] is config.GrowthConfig.freq


def test_the_values_params_yaml_may_name_are_the_models_own() -> None:
    # the checks of train.open_help_rules / closed_help_rules / usl_method use config's copies
    assert config.HELP_RULES == ModelingConfig().open_help_rules == ModelingConfig().closed_help_rules
    assert config.USL_METHODS == USL_METHODS


def test_every_model_starts_from_the_same_dispatcher_and_fit_defaults() -> None:
    modeling = ModelingConfig()
    closed, open_, lpar = ClosedMVAModel(), OpenDispatchModel(), Dispatch(n_gcp=1)
    for model in (closed, open_, lpar):
        assert (model.honor_priority, model.help_wait_ms, model.help_rule) == \
            (modeling.honor_priority, modeling.help_wait_ms, modeling.help_rule)
    for model in (closed, open_):
        assert (model.n_boot, model.alpha, model.seed) == (modeling.n_boot, modeling.alpha, modeling.seed)
    assert closed.eligible_bursts == modeling.eligible_bursts
    assert closed.ziip_eligible_fraction == modeling.ziip_eligible_fraction
    assert open_.min_transactions == modeling.open_min_transactions


def test_an_unknown_section_or_key_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown section\\(s\\) 'plannner'"):
        config.parse_params({"plannner": {"max_added_gcp": 4}})
    with pytest.raises(ValueError, match="max_added_gpc"):
        config.parse_params({"planner": {"max_added_gpc": 4}})


def test_the_bundled_params_file_reads() -> None:
    params = config.load_params(REPO / "params.yaml")
    assert params.planner.max_added_gcp == 4 and params.train.knee_k == 3.0
    # the help rules' priors reach the WLM class fit as a mapping, the rule IBM describes first
    assert dict(training.modeling_config(params).open_help_rule_prior) == {"pool": 2.0, "burst": 1.0}


@pytest.mark.parametrize("prior", [{"pool": 0}, {"pol": 2}, {"pool": True}, [2, 1], "pool"])
def test_a_help_rule_prior_must_name_a_rule_and_a_positive_weight(prior) -> None:
    with pytest.raises(ValueError, match="train.open_help_rule_prior must map pool / burst to positive numbers"):
        config.parse_params({"train": {"open_help_rule_prior": prior}})


def test_the_marts_engine_is_duckdb_unless_params_or_the_environment_say_spark() -> None:
    assert config.warehouse_config(config.load_params(REPO / "params.yaml"), {}) == config.WarehouseConfig()
    assert config.WarehouseConfig().engine == "duckdb"  # `make run` stays embedded
    chosen = config.parse_params({"warehouse": {"engine": "spark", "spark_master": "spark://h:7077"}})
    assert config.warehouse_config(chosen, {}) == config.WarehouseConfig("spark", "spark://h:7077")
    overridden = config.warehouse_config(config.parse_params({}), {"KNEECAP_ENGINE": "spark",
                                                                   "KNEECAP_SPARK_MASTER": "local[2]"})
    assert overridden == config.WarehouseConfig("spark", "local[2]")
    with pytest.raises(ValueError, match="warehouse.engine must be one of duckdb, spark, got 'postgres'"):
        config.parse_params({"warehouse": {"engine": "postgres"}})
    with pytest.raises(ValueError, match="KNEECAP_ENGINE='Spark'"):
        config.warehouse_config(config.parse_params({}), {"KNEECAP_ENGINE": "Spark"})


def test_the_usl_method_reaches_the_fits_and_a_misspelt_one_is_an_error() -> None:
    params = config.parse_params({"train": {"usl_method": "field"}})
    assert training.modeling_config(params).usl_method == "field"
    assert config.load_params(REPO / "params.yaml").train.usl_method == "nls"
    with pytest.raises(ValueError, match="train.usl_method must be one of nls, field, got 'gunther'"):
        config.parse_params({"train": {"usl_method": "gunther"}})


def test_the_desk_opens_on_the_configured_workload_or_says_why_not() -> None:
    assert config.load_params(REPO / "params.yaml").desk.default_workload == "zosconnect_cics_diag"
    desk = config.parse_params({"desk": {"default_workload": "b"}}).desk
    assert desk.opening_choice(["a", "b"]) == (1, None)
    # not listed (no champion, or not the page's kind of model): the first, and the page says so
    index, note = desk.opening_choice(["a", "c"])
    assert index == 0 and note == "'b' (params.yaml desk.default_workload) is not listed here: the page opens on 'a'"
    assert config.parse_params({}).desk.opening_choice(["a", "b"]) == (0, None)
    assert config.parse_params({"desk": None}).desk.opening_choice(["a"]) == (0, None)
    with pytest.raises(ValueError, match="desk.default_workload must be a workload name, got 3"):
        config.parse_params({"desk": {"default_workload": 3}})
    with pytest.raises(ValueError, match="unknown parameter\\(s\\) 'default_workloads'"):
        config.parse_params({"desk": {"default_workloads": "a"}})
