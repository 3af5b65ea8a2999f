-- table:   stg_rmf_partition
-- grain:   one row per system x RMF interval x LPAR x processor pool, from the Partition Data
--          Report of RMF Postprocessor CPU reports in XML (TOTAL lines dropped; the
--          *PHYSICAL* pseudo-partition kept and flagged)
-- key:     (system_id, interval_start_at, partition_name, cpu_type)
-- inputs:  rmf_partition (kneecap.rmf.read_postprocessor(...).partition)
-- dedup:   one row per key: a report stored twice (saved again with other bytes, into a store
--          from before kneecap.ingest.rmf compared intervals) gives two; the first in the order
--          of its values is kept, so the same rows give the same row; fct_rmf_duplicates counts them
with

source as (
    select * from rmf_partition
),

typed as (
    select
        cast(system_id as varchar) as system_id,
        cast(interval_start_at as timestamp) as interval_start_at,
        cast(interval_s as double) as interval_s,
        cast(partition_name as varchar) as partition_name,
        cast(is_own_partition as boolean) as is_own_partition,
        cast(is_physical as boolean) as is_physical,
        cast(partition_status as varchar) as partition_status,
        cast(cpu_type as varchar) as cpu_type,
        cast(weight as double) as weight,
        cast(msu_defined as double) as msu_defined,
        cast(msu_actual as double) as msu_actual,
        try_cast(n_logical as integer) as n_logical,
        cast(effective_dispatch_s as double) as effective_dispatch_s,
        cast(total_dispatch_s as double) as total_dispatch_s,
        cast(log_proc_effective_pct as double) as log_proc_effective_pct,
        cast(log_proc_total_pct as double) as log_proc_total_pct,
        cast(phys_lpar_mgmt_pct as double) as phys_lpar_mgmt_pct,
        cast(phys_effective_pct as double) as phys_effective_pct,
        cast(phys_total_pct as double) as phys_total_pct
    from source
),

ranked as (
    select
        *,
        row_number() over (
            partition by system_id, interval_start_at, partition_name, cpu_type
            order by
                interval_s, is_own_partition, is_physical, partition_status, weight, msu_defined,
                msu_actual, n_logical, effective_dispatch_s, total_dispatch_s, log_proc_effective_pct,
                log_proc_total_pct, phys_lpar_mgmt_pct, phys_effective_pct, phys_total_pct
        ) as copy_no
    from typed
),

final as (
    select
        system_id,
        interval_start_at,
        interval_s,
        partition_name,
        is_own_partition,
        is_physical,
        partition_status,
        cpu_type,
        weight,
        msu_defined,
        msu_actual,
        n_logical,
        effective_dispatch_s,
        total_dispatch_s,
        log_proc_effective_pct,
        log_proc_total_pct,
        phys_lpar_mgmt_pct,
        phys_effective_pct,
        phys_total_pct
    from ranked
    where copy_no = 1
)

select * from final
