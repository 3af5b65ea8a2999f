-- table:   stg_smf70_cpu
-- grain:   one row per system x RMF interval x processor type (SMF 70.1, RMF broken records
--          already combined by kneecap.smf.type70.finalize)
-- key:     (system_id, interval_start_at, cpu_type)
-- inputs:  smf70_cpu (decoded SMF 70.1, kneecap.smf.reader)
with

source as (
    select * from smf70_cpu
),

final as (
    select
        cast(system_id as varchar) as system_id,
        cast(sysplex as varchar) as sysplex,
        cast(interval_start_at as timestamp) as interval_start_at,
        cast(interval_s as double) as interval_s,
        cast(cpu_type as varchar) as cpu_type,
        cast(n_online as integer) as n_online,
        cast(online_s as double) as online_s,
        cast(lpar_busy_pct as double) as lpar_busy_pct,
        cast(mvs_busy_pct as double) as mvs_busy_pct
    from source
)

select * from final
