-- table:   dim_workloads
-- grain:   one workload (a measured system under one setup), across all its sources
-- key:     workload
-- inputs:  fct_measurements
-- has_response_curve: enough points to fit a response-time model (clients or tps with resp_ms)
-- has_cost:           enough points to fit a CPU-cost model
with

points as (
    select * from fct_measurements
),

-- the sources listed apart from the counts: Spark cannot plan an ordered string_agg (listagg)
-- beside another distinct aggregate (count(distinct clients)) in one select
sources as (
    select
        workload,
        string_agg(source_id, ',' order by source_id) as source_ids
    from (select distinct
        workload,
        source_id
    from points) as pairs
    group by workload
),

counts as (
    select
        workload,
        count(*) as n_points,
        count(clients) as n_with_clients,
        count(resp_ms) as n_with_resp,
        count(cpu_ms_per_tran) as n_with_cost,
        min(clients) as min_clients,
        max(clients) as max_clients,
        max(think_time_ms) as think_time_ms,
        min(n_gcp) as n_gcp,
        min(n_ziip) as min_n_ziip,
        max(n_ziip) as max_n_ziip,
        count(*) filter (where clients is not null and resp_ms is not null) >= 3
        and count(distinct clients) >= 3 as has_response_curve,
        count(*) filter (where cpu_ms_per_tran is not null) >= 3 as has_cost,
        case
            when count(clients) > 0 and coalesce(max(think_time_ms), 0) > 0 then 'closed'
            when count(clients) > 0 then 'closed_zero_think'
            when count(resp_ms) > 0 then 'open'
            else 'cost'
        end as workload_kind
    from points
    group by workload
),

final as (
    select
        c.workload,
        s.source_ids,
        -- workload below is c's column, named inside c.* exclude, not a reference to qualify
        c.* exclude (workload)  -- noqa: RF02
    from counts as c
    inner join sources as s on c.workload is not distinct from s.workload
)

select * from final
order by workload
