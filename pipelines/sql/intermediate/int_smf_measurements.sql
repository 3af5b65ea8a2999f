-- table:   int_smf_measurements
-- grain:   one measured point per system x RMF interval x WLM service/report class x period
--          (exactly the columns of kneecap.schema.FCT_MEASUREMENTS_COLUMNS)
-- key:     (source_id, workload, point_id); point_id = system/interval start/class/period
-- inputs:  stg_smf72_workload, stg_smf70_cpu (binary SMF); stg_rmf_workload, stg_rmf_cpu (RMF
--          Postprocessor XML, same columns): source_id says which
-- formulas (RMF Workload Activity, IBM SMF manual record 72.3; see kneecap.smf.type72):
--   tps                 = R723CRCP / interval_s
--   cpu_total_pct       = APPL% CP + APPL% IIP
--   ziip_eligible_pct   = APPL% IIP + APPL% IIPCP
--   cpu_ms_per_tran     = cpu_s / ended * 1000  (= cpu_s / interval_s / tps * 1000)
--   n_gcp / n_ziip      = engines of type CP / IIP online to the LPAR (SMF 70.1, same interval)
--   *_samples           = the class period's WLM state samples (72.3), as they are
--   ziip_s / ziip_cp_equiv_s = zIIP engine seconds and the same normalised to CP time (x NFFS / 256)
--   ziip_mt_capacity    = R723MCFS / 1024 where the zIIPs ran SMT-2 (above 1), else null
--   lpar_*_busy_pct     = LPAR busy per engine of the pool, every class included (SMF 70.1
--                         LPAR busy: the logical processors' dispatch time over online time);
--                         zIIPs in SMT-2: busy per zIIP thread, the threads' MVS busy (70.1 CPU
--                         data sections are one per thread, the PR/SM logical processor sections
--                         one per core, IBM SMF manual 70.1), the busy the dispatch model's threads
--                         have; n_ziip then counts cores (PR/SM logical processors)
with

-- union all by position, not by name (Spark SQL has no UNION BY NAME): the RMF XML staging models
-- have the SMF ones' columns in the same order (tests/sql/test_table_columns.py checks it)
workload as (
    select
        *,
        'smf' as source_id
    from stg_smf72_workload
    union all
    select
        *,
        'rmf_xml' as source_id
    from stg_rmf_workload
),

cpu as (
    select * from stg_smf70_cpu
    union all
    select * from stg_rmf_cpu
),

engines as (
    select
        system_id,
        interval_start_at,
        max(case when cpu_type = 'CP' then n_online end) as n_gcp,
        max(case when cpu_type = 'IIP' then n_online end) as n_ziip,
        max(case when cpu_type = 'CP' then lpar_busy_pct end) as lpar_gcp_busy_pct,
        max(case when cpu_type = 'IIP' then lpar_busy_pct end) as lpar_ziip_busy_pct,
        max(case when cpu_type = 'IIP' then mvs_busy_pct end) as mvs_ziip_busy_pct
    from cpu
    group by system_id, interval_start_at
),

measured as (
    select
        w.*,
        e.n_gcp,
        e.n_ziip,
        e.lpar_gcp_busy_pct,
        -- a core's dispatch time counts it busy while one thread runs: in SMT-2 the threads say
        case
            when w.ziip_mt_capacity is not null then e.mvs_ziip_busy_pct
            else e.lpar_ziip_busy_pct
        end as lpar_ziip_busy_pct
    from workload as w
    left join engines as e
        on
            w.system_id = e.system_id
            and w.interval_start_at = e.interval_start_at
),

final as (
    select
        source_id,
        class_name as workload,
        -- the literal T outside the formats: Spark's date_format would read it as a pattern letter
        system_id || '/' || strftime(interval_start_at, '%Y-%m-%d') || 'T'
        || strftime(interval_start_at, '%H:%M:%S')
        || '/'
        || (case when is_report_class then 'R:' else 'S:' end)
        || class_name
        || '/' || cast(period as varchar) as point_id,
        cast(null as double) as clients,
        cast(null as double) as think_time_ms,
        ended / nullif(interval_s, 0) as tps,
        resp_ms,
        cast(n_gcp as double) as n_gcp,
        -- 70.1 present but no IIP row means no zIIPs online; no 70.1 at all means unknown
        cast(case when n_gcp is not null then coalesce(n_ziip, 0) end as double) as n_ziip,
        appl_cp_pct + appl_iip_pct as cpu_total_pct,
        appl_cp_pct as cpu_gcp_pct,
        appl_iip_pct as cpu_ziip_pct,
        appl_iip_pct + appl_iipcp_pct as ziip_eligible_pct,
        appl_iipcp_pct as ziip_eligible_on_gcp_pct,
        cpu_s,
        cpu_s / nullif(ended, 0) * 1000 as cpu_ms_per_tran,
        cast(null as double) as req_bytes,
        cast(null as double) as resp_bytes,
        interval_s,
        cast(null as double) as n_queues,
        cast(null as varchar) as transport,
        cast(null as varchar) as pooling,
        cast(null as varchar) as "release",
        cast(null as varchar) as api,
        case when is_report_class then 'report_class' else 'service_class' end as config,
        system_id,
        class_name as service_class,
        interval_start_at,
        lpar_gcp_busy_pct,
        lpar_ziip_busy_pct,
        cast(cpu_using_samples as double) as cpu_using_samples,
        cast(cpu_delay_samples as double) as cpu_delay_samples,
        cast(ziip_using_samples as double) as ziip_using_samples,
        cast(ziip_on_cp_using_samples as double) as ziip_on_cp_using_samples,
        cast(ziip_delay_samples as double) as ziip_delay_samples,
        ziip_s,
        ziip_cp_equiv_s,
        ziip_mt_capacity
    from measured
)

select * from final
