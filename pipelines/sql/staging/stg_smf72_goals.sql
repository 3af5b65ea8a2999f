-- table:   stg_smf72_goals
-- grain:   one row per system x RMF interval x WLM service/report class x period (SMF 72.3)
-- key:     (system_id, interval_start_at, class_name, is_report_class, period)
-- inputs:  smf72_workload (decoded SMF 72.3, kneecap.smf.reader)
-- columns: the period's WLM goal (R723CRGF type, R723CVAL in ms or velocity %, R723CPCT), the
--          midpoint of its response time distribution (R723RTDM, ms), the 13 bucket bounds of the
--          distribution map (% of the midpoint; null when the period has no distribution) and the
--          14 bucket counts (R723TRDB at R723CRTX), with what the Performance Index needs besides
--          (ended, mean response, total using / delay samples). See kneecap.smf.type72.
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
        cast(importance as integer) as importance,
        cast(goal_type as varchar) as goal_type,
        cast(goal_resp_ms as double) as goal_resp_ms,
        cast(goal_velocity_pct as double) as goal_velocity_pct,
        cast(goal_percentile as integer) as goal_percentile,
        cast(rt_midpoint_ms as double) as rt_midpoint_ms,
        cast(ended as bigint) as ended,
        cast(resp_ms as double) as resp_ms,
        cast(total_using_samples as bigint) as total_using_samples,
        cast(total_delay_samples as bigint) as total_delay_samples,
        cast(rt_bucket_01_max_pct as double) as rt_bucket_01_max_pct,
        cast(rt_bucket_02_max_pct as double) as rt_bucket_02_max_pct,
        cast(rt_bucket_03_max_pct as double) as rt_bucket_03_max_pct,
        cast(rt_bucket_04_max_pct as double) as rt_bucket_04_max_pct,
        cast(rt_bucket_05_max_pct as double) as rt_bucket_05_max_pct,
        cast(rt_bucket_06_max_pct as double) as rt_bucket_06_max_pct,
        cast(rt_bucket_07_max_pct as double) as rt_bucket_07_max_pct,
        cast(rt_bucket_08_max_pct as double) as rt_bucket_08_max_pct,
        cast(rt_bucket_09_max_pct as double) as rt_bucket_09_max_pct,
        cast(rt_bucket_10_max_pct as double) as rt_bucket_10_max_pct,
        cast(rt_bucket_11_max_pct as double) as rt_bucket_11_max_pct,
        cast(rt_bucket_12_max_pct as double) as rt_bucket_12_max_pct,
        cast(rt_bucket_13_max_pct as double) as rt_bucket_13_max_pct,
        cast(rt_bucket_01_count as bigint) as rt_bucket_01_count,
        cast(rt_bucket_02_count as bigint) as rt_bucket_02_count,
        cast(rt_bucket_03_count as bigint) as rt_bucket_03_count,
        cast(rt_bucket_04_count as bigint) as rt_bucket_04_count,
        cast(rt_bucket_05_count as bigint) as rt_bucket_05_count,
        cast(rt_bucket_06_count as bigint) as rt_bucket_06_count,
        cast(rt_bucket_07_count as bigint) as rt_bucket_07_count,
        cast(rt_bucket_08_count as bigint) as rt_bucket_08_count,
        cast(rt_bucket_09_count as bigint) as rt_bucket_09_count,
        cast(rt_bucket_10_count as bigint) as rt_bucket_10_count,
        cast(rt_bucket_11_count as bigint) as rt_bucket_11_count,
        cast(rt_bucket_12_count as bigint) as rt_bucket_12_count,
        cast(rt_bucket_13_count as bigint) as rt_bucket_13_count,
        cast(rt_bucket_14_count as bigint) as rt_bucket_14_count
    from source
)

select * from final
