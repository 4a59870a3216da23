"""``bench.soak``: its invariant checker finds each broken promise, its receiver checks the
Standard Webhooks signature as the standard's own library makes it, and a short soak of the
real layout (gunicorn, a Celery worker and the beat, Redis, PostgreSQL, the receiver) keeps
every invariant. No timing is asserted.

The short soak needs PostgreSQL (``TEST_DATABASE_URL``) and Redis (``TEST_CELERY_BROKER_URL``);
without them it is skipped, except under ``CI=true``, where it fails.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

import pytest
from standardwebhooks.webhooks import Webhook

from bench.soak import invariants
from bench.soak.invariants import Seen
from bench.soak.receiver import signature_valid
from tests.api.celery_tier import BROKER_URL, require_broker

SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def clean() -> Seen:
    """Three records acknowledged, stored, each delivered once; nothing pending; memory flat."""
    acknowledged = {1: ("ann", "YU1-C-AAAAAAB"), 2: ("bob", "YU1-C-AAAAAAB"), 3: ("ann", "FT1-N-AAAAAAB")}
    return Seen(
        acknowledged=dict(acknowledged),
        stored=[(i, player, code) for i, (player, code) in acknowledged.items()],
        receipts=[{"id": f"msg_{i}", "type": "record.created", "record": i, "valid": True} for i in acknowledged],
        pending={"records waiting for a judgement": 0, "webhook deliveries pending": 0},
        rss={"web-1[10]": [(m, 100.0 + 0.1 * m) for m in range(2, 8)]},
    )


def broken(seen: Seen) -> list[str]:
    return [finding.name for finding in invariants.check(seen) if not finding.ok]


def test_a_clean_run_keeps_every_invariant():
    findings = invariants.check(clean())
    assert [f.ok for f in findings] == [True] * 4 and all(f.judged for f in findings)
    assert invariants.report(findings)[1] is True


@pytest.mark.parametrize("change, name", [
    (lambda s: s.receipts.append(dict(s.receipts[0])), "delivered exactly once"),          # a duplicate
    (lambda s: s.receipts.pop(), "delivered exactly once"),                                # a missing delivery
    (lambda s: s.receipts[1].update(valid=False), "delivered exactly once"),               # a bad signature
    (lambda s: s.receipts.append({"id": "msg_x", "type": "record.created", "record": 9, "valid": True}),
     "delivered exactly once"),                                                           # for no stored record
    (lambda s: s.receipts.append({"id": "msg_y", "type": "record.created", "record": 2, "valid": True}),
     "delivered exactly once"),                                                           # a second event
    (lambda s: s.stored.pop(0), "stored exactly once"),                                   # an acknowledged record lost
    (lambda s: s.stored.append((4, "bob", "YU1-C-AAAAAAB")), "stored exactly once"),       # stored twice
    (lambda s: s.stored.__setitem__(2, (3, "eve", "FT1-N-AAAAAAB")), "stored exactly once"),  # another player's
    (lambda s: s.pending.update({"webhook deliveries pending": 2}), "nothing left pending"),
    (lambda s: s.rss.update({"worker-2[11]": [(m, 200.0 + 1.5 * m) for m in range(2, 8)]}), "MB/min"),
])
def test_the_checker_reports_each_broken_invariant_as_a_failure(change, name):
    seen = clean()
    change(seen)
    failed = broken(seen)
    assert len(failed) >= 1 and any(name in f for f in failed), failed
    assert invariants.report(invariants.check(seen))[1] is False


def test_a_stored_record_nobody_acknowledged_is_no_failure_but_needs_its_delivery():
    """A submission whose answer was lost (a killed web process) may be stored: it is not
    acknowledged, so it breaks no promise to the client, but its webhook is still owed."""
    seen = clean()
    seen.stored.append((4, "cy", "YU1-R-AAAAAAB"))
    [delivered] = [f for f in invariants.check(seen) if "delivered" in f.name]
    assert not delivered.ok and "never delivered" in delivered.detail
    seen.receipts.append({"id": "msg_4", "type": "record.created", "record": 4, "valid": True})
    findings = invariants.check(seen)
    assert all(f.ok for f in findings)
    assert "1 stored for submissions that got no answer" in findings[0].detail


def test_memory_growth_is_judged_only_over_long_enough_samples():
    seen = clean()
    seen.rss = {"web-1[10]": [(0.0, 100.0), (1.0, 150.0)]}  # 50 MB/min, but over one minute only
    [memory] = [f for f in invariants.check(seen) if "MB/min" in f.name]
    assert memory.ok and not memory.judged
    assert invariants.slope([(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]) == pytest.approx(2.0)


def test_the_receiver_accepts_the_standards_signature_and_refuses_any_change():
    body = json.dumps({"type": "record.created", "data": {"id": 1}}).encode()
    at = datetime.now(UTC)
    signed = Webhook(SECRET).sign("msg_1", at, body.decode())
    headers = {"webhook-id": "msg_1", "webhook-timestamp": str(int(at.timestamp())), "webhook-signature": signed}
    assert signature_valid(SECRET, headers, body)
    assert not signature_valid(SECRET, headers, body + b" ")
    assert not signature_valid(SECRET, {**headers, "webhook-id": "msg_2"}, body)
    assert not signature_valid("whsec_" + "A" * 32, headers, body)
    assert not signature_valid(SECRET, headers, body, now=at.timestamp() + 3600)  # stale
    # after a rotation the header holds two signatures: either one does
    assert signature_valid(SECRET, {**headers, "webhook-signature": "v1,bm9wZQ== " + signed}, body)


def test_a_short_soak_of_the_real_layout_keeps_every_invariant(tmp_path, capsys):
    """A few hundred records through gunicorn, the worker tier and the receiver, drained and checked."""
    database = os.environ.get("TEST_DATABASE_URL")
    if not database:
        message = "the soak runs on PostgreSQL: set TEST_DATABASE_URL"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    require_broker(BROKER_URL, "Redis")
    from bench.soak.__main__ import main

    code = main(["--no-ramp", "--rate", "10", "--minutes", "0.5", "--seed", "5", "--jobs", "1",
                 "--challenge-wait", "0", "--cache", str(tmp_path / "games"), "--database-url", database,
                 "--broker", BROKER_URL, "--keep", str(tmp_path / "kept")])
    out = capsys.readouterr().out
    figures = json.loads((tmp_path / "kept" / "figures.json").read_text())
    findings = {f["name"]: f for f in figures["findings"]}
    # (memory growth is judged on long runs: half a minute of a warming process is no leak)
    kept = {name: f for name, f in findings.items() if "MB/min" not in name}
    assert set(kept) == {"every acknowledged record stored exactly once",
                         "each record.created delivered exactly once, signature valid",
                         "nothing left pending after the drain"}, findings
    assert all(f["ok"] for f in kept.values()), findings
    assert code == 0 or not all(f["ok"] for f in findings.values()), out[-3000:]
    # (a busy machine may fall behind: a record not sent then is an error, not a broken promise)
    records = figures["rows"]["POST /records"]
    acknowledged = int(findings["every acknowledged record stored exactly once"]["detail"].split()[0].replace(",", ""))
    assert records["n"] == 300 and 0 < acknowledged <= records["n"] - records["errors"]
    assert figures["drained_after"] is not None
    receipts = [json.loads(line) for line in (tmp_path / "kept" / "deliveries.jsonl").read_text().splitlines()]
    assert len(receipts) >= acknowledged and all(r["valid"] for r in receipts)


def test_the_worker_memory_summary_names_the_line_that_grew(tmp_path):
    """``--trace-worker``: a process's snapshots compared from the warm-up's to its last, by line."""
    import tracemalloc

    from bench.soak.memory import summary

    kept = []
    tracemalloc.start()
    try:
        for count in range(3):
            kept.append(bytearray(200_000 * count))  # (grows between snapshots: the line below)
            tracemalloc.take_snapshot().dump(str(tmp_path / f"4242-{count:04d}.snapshot"))
    finally:
        tracemalloc.stop()
    text = summary(tmp_path, skip=1)
    assert text.startswith("process 4242: traced") and "+0.40 MB in 1 min" in text
    assert "test_soak.py" in text.splitlines()[1]
    assert summary(tmp_path, skip=2) == "process 4242: 3 snapshots, too few to compare"
