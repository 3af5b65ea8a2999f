"""Desk inputs a careless or hostile user can send (issue 14, findings 7 and 8)."""

from __future__ import annotations

from tests.app.test_pages import REPO, SEED004, _app, _k


def test_planner_target_clients_is_bounded(app_env):
    at = _app("planner")
    target = at.number_input(key=_k("plan_clients"))
    assert target.max == 10_000
    assert not at.exception


def test_upload_named_dot_dot_is_read_not_a_traceback(app_env):
    at = _app("data")
    at.file_uploader(key="data_upload").upload("..", SEED004.read_bytes(), "text/csv").run()
    assert not at.exception, at.exception
    # no suffix, so the bytes are sniffed (as an SMF dump): refused with a message, nothing written
    shown = [m.value for m in (*at.error, *at.success)]
    assert shown and shown[0].startswith("upload: ")


def test_ingest_upload_reads_a_file_named_dot_dot(app_env):
    import resources

    result = resources.ingest_upload(
        "..", (REPO / "data" / "raw" / "rmf-samples" / "rmfpp-cpu-small-RPRT-20220412.xml").read_bytes())
    assert result["rows"] > 0
