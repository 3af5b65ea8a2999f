-- table:   stg_reference_measurements
-- grain:   one row per point transcribed from a bundled report table (data/reference/*.csv)
-- key:     (source_id, point_id)
-- inputs:  reference_measurements (the reference CSVs, typed and checked by kneecap.warehouse)
with

source as (
    select * from reference_measurements
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
        cast(null as timestamp) as interval_start_at,
        source_file,
        source_locator,
        note,
        duplicate_of,
        duplicate_of is not null as is_duplicate
    from source
)

select * from final
