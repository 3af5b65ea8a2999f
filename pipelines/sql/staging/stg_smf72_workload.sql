-- table:   stg_smf72_workload
-- grain:   one row per system x RMF interval x WLM service/report class x period (SMF 72.3)
-- key:     (system_id, interval_start_at, class_name, is_report_class, period)
-- inputs:  smf72_workload (decoded SMF 72.3, kneecap.smf.reader)
with

source as (
    select * from smf72_workload
),

final as (
    select
        cast(system_id as varchar) as system_id,
        cast(sysplex as varchar) as sysplex,
        cast(interval_start_at as timestamp) as interval_start_at,
        cast(interval_s as double) as interval_s,
        cast(class_name as varchar) as class_name,
        cast(is_report_class as boolean) as is_report_class,
        cast(period as integer) as period,
        cast(workload_name as varchar) as workload_name,
        cast(ended as bigint) as ended,
        cast(resp_ms as double) as resp_ms,
        cast(cpu_s as double) as cpu_s,
        cast(ziip_s as double) as ziip_s,
        cast(ziip_on_cp_s as double) as ziip_on_cp_s,
        cast(appl_cp_pct as double) as appl_cp_pct,
        cast(appl_iip_pct as double) as appl_iip_pct,
        cast(appl_iipcp_pct as double) as appl_iipcp_pct,
        cast(cpu_using_samples as bigint) as cpu_using_samples,
        cast(cpu_delay_samples as bigint) as cpu_delay_samples,
        cast(ziip_using_samples as bigint) as ziip_using_samples,
        cast(ziip_on_cp_using_samples as bigint) as ziip_on_cp_using_samples,
        cast(ziip_delay_samples as bigint) as ziip_delay_samples,
        cast(total_using_samples as bigint) as total_using_samples,
        cast(total_delay_samples as bigint) as total_delay_samples,
        -- R723CSUP x R723NFFS / 256: with ziip_s, a zIIP's speed over a GCP's
        cast(ziip_cp_equiv_s as double) as ziip_cp_equiv_s,
        -- R723MCFS / 1024 where above 1 (the zIIPs in SMT-2), null in MT-1
        cast(ziip_mt_capacity as double) as ziip_mt_capacity
    from source
)

select * from final
