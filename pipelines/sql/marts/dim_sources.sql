-- table:   dim_sources
-- grain:   one bundled report table (or 'smf' for users' own SMF/RMF data)
-- key:     source_id
-- inputs:  reference_sources (data/reference/sources.csv), fct_measurements
with

sources as (
    select * from reference_sources
),

points as (
    select
        source_id,
        count(*) as n_points,
        count(distinct workload) as n_workloads
    from fct_measurements
    group by source_id
),

final as (
    select
        s.source_id,
        s.source_file,
        s.title,
        s.section,
        s.table_or_figure,
        s.units,
        s.cpc,
        s.n_gcp,
        s.n_ziip,
        s.think_time_ms,
        s.req_bytes,
        s.resp_bytes,
        s.workload_kind,
        s.notes,
        coalesce(p.n_points, 0) as n_points
    from sources as s
    left join points as p using (source_id)
)

select * from final
order by source_id
