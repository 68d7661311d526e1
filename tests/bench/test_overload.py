"""bench.overload's smoke version: a slow linker behind a real gunicorn, more clients than its queue takes."""
from __future__ import annotations

import pytest

from bench.overload import RECOVERY_LIMIT_S, run


@pytest.mark.slow  # starts gunicorn
def test_an_overloaded_worker_refuses_with_retry_after_and_recovers() -> None:
    report = run("tests.support.wsgi_slow_app:app", {"SLOW_LINKER_SECONDS": "0.2", "ENTQA_QUEUE_DOCUMENTS": "3"},
                 clients=12, seconds=6, max_wait_s=1)
    assert report.statuses.get("200", 0) > 0 and report.statuses.get("503", 0) > 0
    assert report.server_errors_other_than_503 == 0 and report.refusals_without_retry_after == 0
    assert report.recovery_s < RECOVERY_LIMIT_S  # answered again once the load stopped
