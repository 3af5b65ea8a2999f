-- table:   fct_sysplex_performance_index
-- grain:   one row per sysplex x RMF interval start x WLM service class period with a goal, over the
--          systems of the sysplex whose SMF 72.3 has that period at that interval start
-- key:     (sysplex, interval_start_at, class_name, period)
-- inputs:  fct_performance_index, stg_smf72_goals, fct_rt_buckets
-- pi:      the sysplex Performance Index: "Each service class period has a sysplex and a local
--          performance index. The sysplex performance index represents the performance of a service
--          class period across all the systems in the sysplex" (IBM WLM Services, "Performance
--          Index"); fct_performance_index has each system's own (local) PI. The systems' 72.3
--          counts are summed before the PI is read, as RMF's sysplex (overview) reporting sums them
--          (RTIME = Sum(R723CXET) / Sum(R723CRCP), EXVEL = Sum(R723CTOU) / (Sum(R723CTOU) +
--          Sum(R723CTOT)); IBM RMF User's Guide, "Workload Activity - SMF record type 72-3"):
--   percentile  the 14 response time buckets summed over the systems, then the first bucket by which
--               the goal percentile completed (100 x cum >= R723CPCT x total), its bound / 100, 5.5 in
--               the open bucket 14 (the local rule of fct_performance_index on the summed counts)
--   average     Sum(resp_ms x ended) / Sum(ended) over the goal: every transaction ended in the
--               sysplex weighs the same, not every system
--   velocity    goal / (100 x Sum(R723CTOU) / (Sum(R723CTOU) + Sum(R723CTOT)))
--   discretionary  0.81, as on each system
--   null where no system completed anything (response time goals), there are no samples
--   (velocity), or the systems recorded different goals for the period (a policy activated in the
--   interval: is_goal_same_on_every_system false)
-- systems: n_systems counts the systems whose 72.3 has the period at this interval start;
--          n_systems_missing those of the sysplex that have the period at some other interval
--          start but not this one (a dump not delivered, an interval not synchronised). Intervals
--          are matched on their exact start (SMF72IST): for sysplex reports IBM recommends "the
--          Monitor I option SYNC(SMF) for all systems" (RMF User's Guide, SYSRPTS), which aligns them;
--          a system whose interval starts at another time makes a row of its own and is counted
--          missing in the others' rows (nothing is split or interpolated between intervals). Sysplexes without a
--          name (SMF72XNM blank) have no row.
-- engines: the sums of integers are exact on both engines; total_resp_ms is a sum of doubles,
--          which Spark may add in another order over three or more systems (last bits only).
with

periods as (
    select * from fct_performance_index
    where sysplex is not null and sysplex != ''
),

samples as (
    select
        system_id,
        interval_start_at,
        class_name,
        period,
        total_using_samples,
        total_delay_samples
    from stg_smf72_goals
    where not is_report_class
),

class_systems as (
    select
        sysplex,
        class_name,
        period,
        count(distinct system_id) as n_class_systems
    from periods
    group by sysplex, class_name, period
),

summed as (
    select
        p.sysplex,
        p.interval_start_at,
        p.class_name,
        p.period,
        max(p.interval_s) as interval_s,
        min(p.workload_name) as workload_name,
        min(p.importance) as importance,
        min(p.goal_type) as goal_type,
        min(p.goal_resp_ms) as goal_resp_ms,
        min(p.goal_percentile) as goal_percentile,
        min(p.goal_velocity_pct) as goal_velocity_pct,
        -- the policy is the sysplex's: the systems differ only while a new one is being activated
        (
            min(p.goal_type) = max(p.goal_type)
            and coalesce(min(p.goal_resp_ms) = max(p.goal_resp_ms), true)
            and coalesce(min(p.goal_percentile) = max(p.goal_percentile), true)
            and coalesce(min(p.goal_velocity_pct) = max(p.goal_velocity_pct), true)
        ) as is_goal_same_on_every_system,
        count(*) as n_systems,
        cast(sum(p.ended) as bigint) as ended,
        -- resp_ms is empty where a system ended nothing: it adds no response time then
        sum(case when p.ended > 0 then p.resp_ms * p.ended else 0.0 end) as total_resp_ms,
        cast(sum(s.total_using_samples) as bigint) as total_using_samples,
        cast(sum(s.total_delay_samples) as bigint) as total_delay_samples,
        min(p.performance_index) as min_local_performance_index,
        max(p.performance_index) as max_local_performance_index
    from periods as p
    inner join samples as s
        on
            p.system_id = s.system_id
            and p.interval_start_at = s.interval_start_at
            and p.class_name = s.class_name
            and p.period = s.period
    group by p.sysplex, p.interval_start_at, p.class_name, p.period
),

buckets as (
    -- each bucket's count summed over the systems; its bounds are the goal's (equal goals, equal maps)
    select
        p.sysplex,
        p.interval_start_at,
        p.class_name,
        p.period,
        k.bucket,
        min(k.max_pct) as max_pct,
        min(k.max_ms) as max_ms,
        cast(sum(k.n_transactions) as bigint) as n_transactions
    from fct_rt_buckets as k
    inner join periods as p
        on
            k.system_id = p.system_id
            and k.interval_start_at = p.interval_start_at
            and k.class_name = p.class_name
            and k.period = p.period
    where not k.is_report_class
    group by p.sysplex, p.interval_start_at, p.class_name, p.period, k.bucket
),

cumulated as (
    select
        *,
        cast(sum(n_transactions) over (
            partition by sysplex, interval_start_at, class_name, period
            order by bucket
            rows between unbounded preceding and current row
        ) as bigint) as cum_transactions,
        cast(sum(n_transactions) over (
            partition by sysplex, interval_start_at, class_name, period
        ) as bigint) as total_transactions
    from buckets
),

reached as (
    select
        c.sysplex,
        c.interval_start_at,
        c.class_name,
        c.period,
        min(c.bucket) as pi_bucket
    from cumulated as c
    inner join summed as s
        on
            c.sysplex = s.sysplex
            and c.interval_start_at = s.interval_start_at
            and c.class_name = s.class_name
            and c.period = s.period
    where
        s.goal_type = 'percentile'
        and c.total_transactions > 0
        and 100 * c.cum_transactions >= s.goal_percentile * c.total_transactions
    group by c.sysplex, c.interval_start_at, c.class_name, c.period
),

bounded as (
    select
        r.sysplex,
        r.interval_start_at,
        r.class_name,
        r.period,
        r.pi_bucket,
        c.max_pct,
        c.max_ms
    from reached as r
    inner join cumulated as c
        on
            r.sysplex = c.sysplex
            and r.interval_start_at = c.interval_start_at
            and r.class_name = c.class_name
            and r.period = c.period
            and r.pi_bucket = c.bucket
),

measured as (
    select
        *,
        case when ended > 0 then total_resp_ms / ended end as resp_ms,
        case
            -- in doubles: Spark reads 100.0 as a decimal and would keep the quotient one
            when total_using_samples + total_delay_samples > 0
                then
                    100 * cast(total_using_samples as double)
                    / cast(total_using_samples + total_delay_samples as double)
        end as velocity_pct
    from summed
),

final as (
    select
        m.sysplex,
        m.interval_start_at,
        m.interval_s,
        m.class_name,
        m.period,
        m.workload_name,
        m.importance,
        m.goal_type,
        m.goal_resp_ms,
        m.goal_percentile,
        m.goal_velocity_pct,
        m.is_goal_same_on_every_system,
        m.n_systems,
        c.n_class_systems - m.n_systems as n_systems_missing,
        m.ended,
        m.resp_ms,
        m.velocity_pct,
        b.max_ms as resp_at_goal_percentile_ms,
        b.pi_bucket,
        case
            when not m.is_goal_same_on_every_system then null
            when m.goal_type = 'percentile' then case when b.pi_bucket = 14 then 5.5 else b.max_pct / 100.0 end
            when m.goal_type = 'average' then m.resp_ms / nullif(m.goal_resp_ms, 0)
            when m.goal_type = 'velocity' then m.goal_velocity_pct / nullif(m.velocity_pct, 0)
            when m.goal_type = 'discretionary' then 0.81
        end as performance_index,
        m.min_local_performance_index,
        m.max_local_performance_index
    from measured as m
    inner join class_systems as c
        on
            m.sysplex = c.sysplex
            and m.class_name = c.class_name
            and m.period = c.period
    left join bounded as b
        on
            m.sysplex = b.sysplex
            and m.interval_start_at = b.interval_start_at
            and m.class_name = b.class_name
            and m.period = b.period
)

select * from final
order by sysplex, interval_start_at, class_name, period
