-- table:   fct_cpu_intervals
-- grain:   one row per system x RMF interval x processor type (CP, IIP, ...)
-- key:     (source_id, system_id, interval_start_at, cpu_type)
-- inputs:  stg_smf70_cpu (binary SMF 70.1), stg_rmf_cpu (RMF Postprocessor CPU report, XML)
-- busy:    lpar_busy_pct / mvs_busy_pct per engine as RMF's CPU Activity report defines them
--          (0-100 per engine); busy_engines = lpar_busy_pct / 100 x n_online
with

smf as (
    select
        *,
        'smf' as source_id
    from stg_smf70_cpu
),

rmf as (
    select
        *,
        'rmf_xml' as source_id
    from stg_rmf_cpu
),

unioned as (
    -- by position (Spark SQL has no UNION BY NAME): stg_rmf_cpu has stg_smf70_cpu's columns in
    -- the same order (tests/sql/test_table_columns.py checks it)
    select * from smf
    union all
    select * from rmf
),

final as (
    select
        source_id,
        system_id,
        interval_start_at,
        interval_s,
        cpu_type,
        n_online,
        lpar_busy_pct,
        mvs_busy_pct,
        lpar_busy_pct / 100.0 * n_online as busy_engines
    from unioned
)

select * from final
order by source_id, system_id, interval_start_at, cpu_type
