"""`bench.plan.report`: what a plan's runs came to, without click or a server."""

from pathlib import Path

from infermeter.bench.plan.report import PlanReport, stops_plan
from infermeter.bench.run.config import RunResult
from infermeter.bench.session.config import SessionOutcome
from infermeter.bench.session.interrupts import INTERRUPTED, TERMINATED


def _run(stop_reason: str | None = None) -> RunResult:
    run = RunResult("http://h", "m", "completions", "chat", 0, 0, incomplete=bool(stop_reason))
    run.stop_reason = stop_reason
    return run


def test_plan_report_counts_failed_and_incomplete_runs_in_order() -> None:
    report = PlanReport(4)
    report.add_failure("a", "cannot reach http://h")
    assert report.add("b", SessionOutcome(_run(), output=Path("b.json"))) is None
    assert report.add("c", SessionOutcome(_run("vLLM exited"))) == "incomplete: vLLM exited"
    assert report.failure_line() == "2 of 4 runs failed or are incomplete: a, c"
    runs = report.as_json()["runs"]
    assert [(r["name"], r["output"], r["error"]) for r in runs] == [
        ("a", None, "cannot reach http://h"),
        ("b", "b.json", None),
        ("c", None, "incomplete: vLLM exited"),
    ]
    assert runs[0]["points"] == []
    assert runs[1]["model"] == "m"


def test_plan_report_of_runs_that_all_ran_has_no_failure_line() -> None:
    report = PlanReport(1)
    assert report.add("only", SessionOutcome(_run())) is None
    assert report.failure_line() is None


def test_only_a_signal_stops_the_plan() -> None:
    assert stops_plan(SessionOutcome(_run(INTERRUPTED)))
    assert stops_plan(SessionOutcome(_run(TERMINATED)))
    assert not stops_plan(SessionOutcome(_run("vLLM exited with code 1 during the run")))
    assert not stops_plan(SessionOutcome(_run()))
