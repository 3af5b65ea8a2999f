-- table:   fct_performance_index
-- grain:   one row per system x RMF interval x WLM service class period with a goal (percentile,
--          average, velocity or discretionary; report classes have none)
-- key:     (system_id, interval_start_at, class_name, period)
-- inputs:  stg_smf72_goals, fct_rt_buckets
-- pi:      the local Performance Index as RMF measures it (kneecap.wlm, which the tests hold equal):
--   percentile  the bound (max_pct / 100) of the first bucket by which the goal percentile of the
--               transactions completed (100 x cum >= R723CPCT x total, exact); 5.5 when that is the
--               open bucket 14 (IBM SMF Explorer, field performance_index)
--   average     resp_ms / goal_resp_ms (R723CTET x 1.024 / R723CRCP over the goal)
--   velocity    goal_velocity_pct / velocity_pct, velocity_pct = 100 x R723CTOU / (R723CTOU +
--               R723CTOT) (RMF overview condition EXVEL); null when nothing was using
--   discretionary  0.81 ("defined to have a performance index of .81", IBM WLM Services)
--   null where the period completed nothing (response time goals) or has no samples (velocity)
with

periods as (
    select * from stg_smf72_goals
    where
        not is_report_class
        and goal_type in ('percentile', 'average', 'velocity', 'discretionary')
),

reached as (
    select
        k.system_id,
        k.interval_start_at,
        k.class_name,
        k.period,
        min(k.bucket) as pi_bucket
    from fct_rt_buckets as k
    inner join periods as p
        on
            k.system_id = p.system_id
            and k.interval_start_at = p.interval_start_at
            and k.class_name = p.class_name
            and k.period = p.period
    where
        not k.is_report_class
        and p.goal_type = 'percentile'
        and k.total_transactions > 0
        and 100 * k.cum_transactions >= p.goal_percentile * k.total_transactions
    group by k.system_id, k.interval_start_at, k.class_name, k.period
),

bounded as (
    select
        r.system_id,
        r.interval_start_at,
        r.class_name,
        r.period,
        r.pi_bucket,
        k.max_pct,
        k.max_ms
    from reached as r
    inner join fct_rt_buckets as k
        on
            r.system_id = k.system_id
            and r.interval_start_at = k.interval_start_at
            and r.class_name = k.class_name
            and r.period = k.period
            and r.pi_bucket = k.bucket
            and not k.is_report_class
),

velocity as (
    select
        *,
        case
            -- in doubles: Spark reads 100.0 as a decimal and would keep the quotient one
            when total_using_samples + total_delay_samples > 0
                then
                    100 * cast(total_using_samples as double)
                    / cast(total_using_samples + total_delay_samples as double)
        end as velocity_pct
    from periods
),

final as (
    select
        v.system_id,
        v.sysplex,
        v.interval_start_at,
        v.interval_s,
        v.class_name,
        v.period,
        v.workload_name,
        v.importance,
        v.goal_type,
        v.goal_resp_ms,
        v.goal_percentile,
        v.goal_velocity_pct,
        v.ended,
        v.resp_ms,
        v.velocity_pct,
        b.max_ms as resp_at_goal_percentile_ms,
        b.pi_bucket,
        case v.goal_type
            when 'percentile' then case when b.pi_bucket = 14 then 5.5 else b.max_pct / 100.0 end
            when 'average' then v.resp_ms / nullif(v.goal_resp_ms, 0)
            when 'velocity' then v.goal_velocity_pct / nullif(v.velocity_pct, 0)
            when 'discretionary' then 0.81
        end as performance_index
    from velocity as v
    left join bounded as b
        on
            v.system_id = b.system_id
            and v.interval_start_at = b.interval_start_at
            and v.class_name = b.class_name
            and v.period = b.period
)

select * from final
order by system_id, interval_start_at, class_name, period
