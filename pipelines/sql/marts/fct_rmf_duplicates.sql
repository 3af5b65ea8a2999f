-- table:   fct_rmf_duplicates
-- grain:   one row per RMF table x system (or sysplex) x interval whose rows reached the pipeline
--          more than once (the same report stored twice, under other bytes); empty normally
-- key:     (table_name, resource_name, interval_start_at)
-- inputs:  rmf_cpu, rmf_partition, rmf_workload (as decoded, before the stg_rmf_* models keep one
--          row per key)
-- counts:  copies = most rows of one key in the interval; rows_dropped = rows the staging
--          models left out (rows - distinct keys; cast to bigint: DuckDB's sum is a hugeint,
--          Spark's a bigint); resource_name = system id, or 'sysplex:<name>' for a
--          sysplex-wide Workload Activity report
with

cpu_keys as (
    select
        cast(system_id as varchar) as resource_name,
        cast(interval_start_at as timestamp) as interval_start_at,
        count(*) as n_rows
    from rmf_cpu
    group by system_id, interval_start_at, cpu_type
),

partition_keys as (
    select
        cast(system_id as varchar) as resource_name,
        cast(interval_start_at as timestamp) as interval_start_at,
        count(*) as n_rows
    from rmf_partition
    group by system_id, interval_start_at, partition_name, cpu_type
),

workload_keys as (
    select
        coalesce(cast(system_id as varchar), 'sysplex:' || cast(sysplex as varchar)) as resource_name,
        cast(interval_start_at as timestamp) as interval_start_at,
        count(*) as n_rows
    from rmf_workload
    group by system_id, sysplex, interval_start_at, class_name, is_report_class, period
),

keyed as (
    select
        'rmf_cpu' as table_name,
        resource_name,
        interval_start_at,
        n_rows
    from cpu_keys
    union all
    select
        'rmf_partition' as table_name,
        resource_name,
        interval_start_at,
        n_rows
    from partition_keys
    union all
    select
        'rmf_workload' as table_name,
        resource_name,
        interval_start_at,
        n_rows
    from workload_keys
),

final as (
    select
        table_name,
        resource_name,
        interval_start_at,
        max(n_rows) as copies,
        cast(sum(n_rows - 1) as bigint) as rows_dropped
    from keyed
    group by table_name, resource_name, interval_start_at
    having max(n_rows) > 1
)

select * from final
order by table_name, resource_name, interval_start_at
