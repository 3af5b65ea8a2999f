-- table:   stg_smf70_capacity
-- grain:   one row per system x RMF interval (SMF 70.1 CPU control section; RMF broken records
--          repeat the section, so their copies are one row)
-- key:     (system_id, interval_start_at)
-- inputs:  smf70_capacity (decoded SMF 70.1, kneecap.smf.type70_capacity)
-- units:   msu_per_cpu_s = 16 / adjustment factor (SMF70CPA_actual / SMF70CPA_scaling_factor, else
--          SMF70CPA): millions of service units per second of GCP time; *_msu_per_h in MSU/h
with

source as (
    select * from smf70_capacity
),

final as (
    select
        cast(system_id as varchar) as system_id,
        cast(max(sysplex) as varchar) as sysplex,
        cast(interval_start_at as timestamp) as interval_start_at,
        cast(max(interval_s) as double) as interval_s,
        cast(max(cpu_family) as integer) as cpu_family,
        cast(max(cpu_adjustment_factor) as bigint) as cpu_adjustment_factor,
        cast(max(cpa_actual) as bigint) as cpa_actual,
        cast(max(cpa_scaling_factor) as bigint) as cpa_scaling_factor,
        cast(max(msu_per_cpu_s) as double) as msu_per_cpu_s,
        cast(max(wla_msu_per_h) as double) as wla_msu_per_h,
        cast(max(lac_msu_per_h) as double) as lac_msu_per_h,
        cast(max(model_capacity_msu_per_h) as double) as model_capacity_msu_per_h,
        cast(max(cast(is_lac_without_wait as integer)) = 1 as boolean) as is_lac_without_wait
    from source
    group by system_id, interval_start_at
)

select * from final
