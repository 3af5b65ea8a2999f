-- table:   stg_rmf_cpu
-- grain:   one row per system x RMF interval x processor type, from RMF Postprocessor CPU
--          reports in XML (the TOTAL/AVERAGE line of each type in "CPU Activity")
-- key:     (system_id, interval_start_at, cpu_type)
-- inputs:  rmf_cpu (kneecap.rmf.read_postprocessor(...).cpu)
-- note:    same columns, types and order as stg_smf70_cpu, so the two can be unioned;
--          sysplex is null because the CPU report does not print it
-- dedup:   one row per key: a report stored twice (saved again with other bytes, into a store
--          from before kneecap.ingest.rmf compared intervals) gives two; the first in the order
--          of its values is kept, so the same rows give the same row; fct_rmf_duplicates counts them
with

source as (
    select * from rmf_cpu
),

typed as (
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
),

ranked as (
    select
        *,
        row_number() over (
            partition by system_id, interval_start_at, cpu_type
            order by interval_s, n_online, online_s, lpar_busy_pct, mvs_busy_pct, sysplex
        ) as copy_no
    from typed
),

final as (
    select
        system_id,
        sysplex,
        interval_start_at,
        interval_s,
        cpu_type,
        n_online,
        online_s,
        lpar_busy_pct,
        mvs_busy_pct
    from ranked
    where copy_no = 1
)

select * from final
