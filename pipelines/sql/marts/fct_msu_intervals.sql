-- table:   fct_msu_intervals
-- grain:   one row per system x RMF interval with the 70.1 capacity fields (binary SMF only: the
--          RMF XML reports carry no adjustment factor)
-- key:     (system_id, interval_start_at)
-- inputs:  stg_smf70_capacity (CPU control section), stg_smf70_cpu (the LPAR's CP dispatch time)
-- formula: gcp_dispatch_s  = LPAR busy % / 100 x online seconds of the image's logical CPs
--          lpar_msu_per_h  = gcp_dispatch_s x 3600 / interval_s x msu_per_cpu_s
--          (IBM SMF Explorer msu_physical: dispatch time x 16 / adjustment factor x 3600 / interval);
--          lac_msu_per_h   = SMF70LAC, the rolling four-hour average WLM recorded, as it is
with

capacity as (
    select * from stg_smf70_capacity
),

gcp as (
    select
        system_id,
        interval_start_at,
        n_online as n_gcp,
        lpar_busy_pct / 100.0 * online_s as gcp_dispatch_s
    from stg_smf70_cpu
    where cpu_type = 'CP'
),

final as (
    select
        c.system_id,
        c.sysplex,
        c.interval_start_at,
        c.interval_s,
        c.msu_per_cpu_s,
        g.n_gcp,
        g.gcp_dispatch_s,
        g.gcp_dispatch_s * 3600.0 / nullif(c.interval_s, 0) * c.msu_per_cpu_s as lpar_msu_per_h,
        c.lac_msu_per_h,
        c.wla_msu_per_h,
        c.model_capacity_msu_per_h,
        c.is_lac_without_wait
    from capacity as c
    left join gcp as g
        on
            c.system_id = g.system_id
            and c.interval_start_at = g.interval_start_at
)

select * from final
order by system_id, interval_start_at
