-- table:   stg_rmf_cpu
-- grain:   one row per system x RMF interval x processor type, from RMF Postprocessor CPU
--          reports in XML (the TOTAL/AVERAGE line of each type in "CPU Activity")
-- key:     (system_id, interval_start_at, cpu_type)
-- inputs:  rmf_cpu (kneecap.rmf.read_postprocessor(...).cpu)
-- note:    same columns, types and order as stg_smf70_cpu, so the two can be unioned;
--          sysplex is null because the CPU report does not print it
with

source as (
    select * from rmf_cpu
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
