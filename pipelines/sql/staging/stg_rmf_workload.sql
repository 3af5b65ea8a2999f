-- table:   stg_rmf_workload
-- grain:   one row per system (or sysplex) x RMF interval x WLM service/report class x period,
--          from RMF Postprocessor Workload Activity (WLMGL) reports in XML
-- key:     (system_id, sysplex, interval_start_at, class_name, is_report_class, period)
-- inputs:  rmf_workload (kneecap.rmf.read_postprocessor(...).workload)
-- note:    same columns, types and order as stg_smf72_workload, so the two can be unioned.
--          The report prints no WLM state samples: those columns are null. period 0 = a
--          multi-period class reported as a whole. A sysplex-wide report has a null system_id.
-- dedup:   one row per key: a report stored twice (saved again with other bytes, into a store
--          from before kneecap.ingest.rmf compared intervals) gives two; the first in the order
--          of its values is kept, so the same rows give the same row; fct_rmf_duplicates counts them
with

source as (
    select * from rmf_workload
),

typed as (
    select
        cast(system_id as varchar) as system_id,
        cast(sysplex as varchar) as sysplex,
        cast(interval_start_at as timestamp) as interval_start_at,
        cast(interval_s as double) as interval_s,
        cast(class_name as varchar) as class_name,
        cast(is_report_class as boolean) as is_report_class,
        cast(period as integer) as period,
        cast(workload_name as varchar) as workload_name,
        try_cast(ended as bigint) as ended,
        cast(resp_ms as double) as resp_ms,
        cast(cpu_s as double) as cpu_s,
        cast(ziip_s as double) as ziip_s,
        cast(ziip_on_cp_s as double) as ziip_on_cp_s,
        cast(appl_cp_pct as double) as appl_cp_pct,
        cast(appl_iip_pct as double) as appl_iip_pct,
        cast(appl_iipcp_pct as double) as appl_iipcp_pct,
        cast(null as bigint) as cpu_using_samples,
        cast(null as bigint) as cpu_delay_samples,
        cast(null as bigint) as ziip_using_samples,
        cast(null as bigint) as ziip_on_cp_using_samples,
        cast(null as bigint) as ziip_delay_samples,
        cast(null as bigint) as total_using_samples,
        cast(null as bigint) as total_delay_samples,
        -- the report prints no normalisation factor and no zIIP MT capacity factor
        cast(null as double) as ziip_cp_equiv_s,
        cast(null as double) as ziip_mt_capacity
    from source
),

ranked as (
    select
        *,
        row_number() over (
            partition by system_id, sysplex, interval_start_at, class_name, is_report_class, period
            order by
                interval_s, workload_name, ended, resp_ms, cpu_s, ziip_s, ziip_on_cp_s, appl_cp_pct,
                appl_iip_pct, appl_iipcp_pct, cpu_using_samples, cpu_delay_samples, ziip_using_samples,
                ziip_on_cp_using_samples, ziip_delay_samples, total_using_samples, total_delay_samples
        ) as copy_no
    from typed
),

final as (
    select
        system_id,
        sysplex,
        interval_start_at,
        interval_s,
        class_name,
        is_report_class,
        period,
        workload_name,
        ended,
        resp_ms,
        cpu_s,
        ziip_s,
        ziip_on_cp_s,
        appl_cp_pct,
        appl_iip_pct,
        appl_iipcp_pct,
        cpu_using_samples,
        cpu_delay_samples,
        ziip_using_samples,
        ziip_on_cp_using_samples,
        ziip_delay_samples,
        total_using_samples,
        total_delay_samples,
        ziip_cp_equiv_s,
        ziip_mt_capacity
    from ranked
    where copy_no = 1
)

select * from final
