-- table:   fct_rt_buckets
-- grain:   one row per system x RMF interval x WLM service/report class x period x response time
--          bucket (1-14), for the periods whose SMF 72.3 carries a response time distribution
--          (response time and velocity goals)
-- key:     (system_id, interval_start_at, class_name, is_report_class, period, bucket)
-- inputs:  stg_smf72_goals
-- buckets: bucket k holds the transactions that completed above min_pct and at most max_pct of
--          the midpoint (bucket 1 from 0, bucket 14 without an upper bound: max_pct null); the
--          midpoint is the goal for response time goals ("For response time goals, the mid point is
--          always the response time goal", IBM SMF Explorer r723rtdm) and R723RTDM (the mean of the
--          collected response times) for velocity goals. cum_transactions counts buckets 1..k,
--          total_transactions all 14 (IBM SMF manual 72.3 "Response Time Distribution Data
--          Section"; kneecap.smf.type72). The sums are cast to bigint: DuckDB's sum is a
--          hugeint, Spark's a bigint.
with

periods as (
    select
        *,
        case
            when goal_type in ('percentile', 'average') then goal_resp_ms
            else nullif(rt_midpoint_ms, 0)
        end as midpoint_ms
    from stg_smf72_goals
    where rt_bucket_01_max_pct is not null
),

buckets as (
    select b.bucket
    from (values (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14)) as b (bucket)
),

long as (
    select
        p.system_id,
        p.sysplex,
        p.interval_start_at,
        p.interval_s,
        p.class_name,
        p.is_report_class,
        p.period,
        p.goal_type,
        p.midpoint_ms,
        b.bucket,
        case b.bucket
            when 1 then 0.0
            when 2 then p.rt_bucket_01_max_pct
            when 3 then p.rt_bucket_02_max_pct
            when 4 then p.rt_bucket_03_max_pct
            when 5 then p.rt_bucket_04_max_pct
            when 6 then p.rt_bucket_05_max_pct
            when 7 then p.rt_bucket_06_max_pct
            when 8 then p.rt_bucket_07_max_pct
            when 9 then p.rt_bucket_08_max_pct
            when 10 then p.rt_bucket_09_max_pct
            when 11 then p.rt_bucket_10_max_pct
            when 12 then p.rt_bucket_11_max_pct
            when 13 then p.rt_bucket_12_max_pct
            when 14 then p.rt_bucket_13_max_pct
        end as min_pct,
        case b.bucket
            when 1 then p.rt_bucket_01_max_pct
            when 2 then p.rt_bucket_02_max_pct
            when 3 then p.rt_bucket_03_max_pct
            when 4 then p.rt_bucket_04_max_pct
            when 5 then p.rt_bucket_05_max_pct
            when 6 then p.rt_bucket_06_max_pct
            when 7 then p.rt_bucket_07_max_pct
            when 8 then p.rt_bucket_08_max_pct
            when 9 then p.rt_bucket_09_max_pct
            when 10 then p.rt_bucket_10_max_pct
            when 11 then p.rt_bucket_11_max_pct
            when 12 then p.rt_bucket_12_max_pct
            when 13 then p.rt_bucket_13_max_pct
        end as max_pct,
        case b.bucket
            when 1 then p.rt_bucket_01_count
            when 2 then p.rt_bucket_02_count
            when 3 then p.rt_bucket_03_count
            when 4 then p.rt_bucket_04_count
            when 5 then p.rt_bucket_05_count
            when 6 then p.rt_bucket_06_count
            when 7 then p.rt_bucket_07_count
            when 8 then p.rt_bucket_08_count
            when 9 then p.rt_bucket_09_count
            when 10 then p.rt_bucket_10_count
            when 11 then p.rt_bucket_11_count
            when 12 then p.rt_bucket_12_count
            when 13 then p.rt_bucket_13_count
            when 14 then p.rt_bucket_14_count
        end as n_transactions
    from periods as p
    cross join buckets as b
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
        goal_type,
        bucket,
        min_pct,
        max_pct,
        min_pct / 100.0 * midpoint_ms as min_ms,
        max_pct / 100.0 * midpoint_ms as max_ms,
        n_transactions,
        cast(sum(n_transactions) over (
            partition by system_id, interval_start_at, class_name, is_report_class, period
            order by bucket
            rows between unbounded preceding and current row
        ) as bigint) as cum_transactions,
        cast(sum(n_transactions) over (
            partition by system_id, interval_start_at, class_name, is_report_class, period
        ) as bigint) as total_transactions
    from long
)

select * from final
order by system_id, interval_start_at, class_name, is_report_class, period, bucket
