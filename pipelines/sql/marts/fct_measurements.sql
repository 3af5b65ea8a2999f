-- table:   fct_measurements
-- grain:   one measured point: a row of a report table, or one SMF/RMF interval of one class
-- key:     (source_id, workload, point_id)
-- inputs:  stg_reference_measurements, int_smf_measurements
-- derivations (each only where the source left the column empty):
--   cpu_total_pct            = cpu_gcp_pct + cpu_ziip_pct                 (RMF APPL% CP + IIP)
--   ziip_eligible_pct        = cpu_ziip_pct + ziip_eligible_on_gcp_pct     (APPL% IIP + IIPCP)
--   cpu_ms_per_tran          = cpu_s / interval_s / tps * 1000             (IBM's cost formula)
--                            = cpu_total_pct * 10 / tps                    (same, from APPL%)
with

-- every CTE names its columns: Spark SQL has neither UNION BY NAME nor SELECT * REPLACE, and the
-- union below is by position (int_smf_measurements has exactly these columns in this order)
reference as (
    select
        source_id,
        workload,
        point_id,
        clients,
        think_time_ms,
        tps,
        resp_ms,
        n_gcp,
        n_ziip,
        cpu_total_pct,
        cpu_gcp_pct,
        cpu_ziip_pct,
        ziip_eligible_pct,
        ziip_eligible_on_gcp_pct,
        cpu_s,
        cpu_ms_per_tran,
        req_bytes,
        resp_bytes,
        interval_s,
        n_queues,
        transport,
        pooling,
        "release",
        api,
        config,
        system_id,
        service_class,
        interval_start_at,
        -- a report table prints no LPAR busy, WLM state samples, zIIP normalisation or MT factor
        cast(null as double) as lpar_gcp_busy_pct,
        cast(null as double) as lpar_ziip_busy_pct,
        cast(null as double) as cpu_using_samples,
        cast(null as double) as cpu_delay_samples,
        cast(null as double) as ziip_using_samples,
        cast(null as double) as ziip_on_cp_using_samples,
        cast(null as double) as ziip_delay_samples,
        cast(null as double) as ziip_s,
        cast(null as double) as ziip_cp_equiv_s,
        cast(null as double) as ziip_mt_capacity
    from stg_reference_measurements
    -- a run printed in two tables is counted once (the row it duplicates stays)
    where not is_duplicate
),

smf as (
    select * from int_smf_measurements
),

unioned as (
    select * from reference
    union all
    select * from smf
),

with_pct as (
    select
        *,
        coalesce(cpu_total_pct, cpu_gcp_pct + cpu_ziip_pct) as derived_cpu_total_pct,
        coalesce(ziip_eligible_pct, cpu_ziip_pct + ziip_eligible_on_gcp_pct) as derived_ziip_eligible_pct
    from unioned
),

final as (
    select
        source_id,
        workload,
        point_id,
        clients,
        think_time_ms,
        tps,
        resp_ms,
        n_gcp,
        n_ziip,
        derived_cpu_total_pct as cpu_total_pct,
        cpu_gcp_pct,
        cpu_ziip_pct,
        derived_ziip_eligible_pct as ziip_eligible_pct,
        ziip_eligible_on_gcp_pct,
        cpu_s,
        coalesce(
            cpu_ms_per_tran,
            case when tps > 0 and interval_s > 0 then cpu_s / interval_s / tps * 1000 end,
            case when tps > 0 then derived_cpu_total_pct * 10 / tps end
        ) as cpu_ms_per_tran,
        req_bytes,
        resp_bytes,
        interval_s,
        n_queues,
        transport,
        pooling,
        "release",
        api,
        config,
        system_id,
        service_class,
        interval_start_at,
        lpar_gcp_busy_pct,
        lpar_ziip_busy_pct,
        cpu_using_samples,
        cpu_delay_samples,
        ziip_using_samples,
        ziip_on_cp_using_samples,
        ziip_delay_samples,
        ziip_s,
        ziip_cp_equiv_s,
        ziip_mt_capacity
    from with_pct
)

select * from final
order by source_id, workload, point_id
