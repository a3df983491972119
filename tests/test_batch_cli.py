"""`venice-agent batch` end to end on the fake model and the paid server: consent decided before
it runs, the receipts and the summary, the exit statuses, `batch status` and `batch resume`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from batch_support import calls, fake_venice, paid_server, questions, script
from cli_support import COMMAND, clean_env


def batch(folder: Path, base_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [COMMAND, "batch", *args],
        env=clean_env(folder, base_url, VENICE_MODEL="fake-model"),
        cwd=folder,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def test_without_yes_no_paid_call_runs_and_resume_repeats_nothing(tmp_path: Path) -> None:
    file = questions(tmp_path, 3)
    with fake_venice(script(), tmp_path) as fake, paid_server(tmp_path) as (config, log):
        done = batch(
            tmp_path, fake.base_url, str(file), "--mcp-config", str(config), "--no-files", "--workers", "2"
        )
        assert done.returncode == 0, done.stderr  # each answered, without its call
        receipts = [json.loads(line) for line in done.stdout.splitlines()]
        assert sorted(r["id"] for r in receipts) == ["q0", "q1", "q2"]
        for receipt in receipts:
            assert receipt["stopped_because"] == "answered" and receipt["steps"] == []
            assert receipt["proposed"][0]["outcome"] != "ran"
        assert not calls(log)  # nobody to ask: the paid server heard nothing
        assert (
            f"3 of 3 questions done (3 answered) · ${sum(r['cost_usd'] for r in receipts):.6f} spent"
            in done.stderr
        )
        name = done.stderr.strip().splitlines()[-1].split()[1].rstrip(":")
        requests = len(fake.chat_bodies())

        status = subprocess.run(
            [COMMAND, "batch", "status"],
            env=clean_env(tmp_path, fake.base_url),
            capture_output=True,
            text=True,
            check=False,
        )
        assert status.returncode == 0 and status.stdout.startswith(f"{name} ({file}): 3 of 3 questions done")

        again = batch(tmp_path, fake.base_url, "resume", name, "--mcp-config", str(config), "--no-files")
        assert again.returncode == 0, again.stderr
        assert sorted(json.loads(line)["id"] for line in again.stdout.splitlines()) == ["q0", "q1", "q2"]
        assert len(fake.chat_bodies()) == requests  # nothing asked again

    missing = subprocess.run(
        [COMMAND, "batch", "status", "nope"],
        env=clean_env(tmp_path, "http://127.0.0.1:9"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 2 and missing.stderr.startswith(
        "venice-agent batch status: no batch nope in sqlite:///"
    )


def test_a_batch_cap_too_small_for_every_question_ends_them_cost_cap_with_status_15(tmp_path: Path) -> None:
    """Three questions one after another, a cap that holds the worst case of about one question
    (each request reserves about $0.0018 and charges $0.00012): the first answers, the others
    end cost_cap before a request the batch's cap cannot reserve; the receipts add up, under it."""
    file = questions(tmp_path, 3)
    db = tmp_path / "b.sqlite"
    with fake_venice(script(), tmp_path) as fake, paid_server(tmp_path) as (config, log):
        done = batch(
            tmp_path,
            fake.base_url,
            str(file),
            "--mcp-config",
            str(config),
            "--no-files",
            "--yes",
            "--workers",
            "1",
            "--max-usd",
            "0.0021",
            "--db",
            str(db),
        )
    assert done.returncode == 15, done.stderr
    receipts = [json.loads(line) for line in done.stdout.splitlines()]
    exits = sorted(r["stopped_because"] for r in receipts)
    assert "cost_cap" in exits and "answered" in exits, exits
    for receipt in receipts:
        if receipt["stopped_because"] == "cost_cap":
            assert (
                "of the batch's $0.002100 cap is left (the other questions hold the rest)"
                in receipt["refusal"]
            )
    spent = sum(r["cost_usd"] for r in receipts)
    assert 0 < spent <= 0.0021
    assert sum(calls(log).values()) == sum(len(r["steps"]) for r in receipts) >= exits.count("answered")


def test_call_usd_is_reserved_and_charged_for_each_tool_call_and_kept_for_resume(tmp_path: Path) -> None:
    file = questions(tmp_path, 2)
    db = tmp_path / "b.sqlite"
    with fake_venice(script(), tmp_path) as fake, paid_server(tmp_path) as (config, _):
        common = ("--mcp-config", str(config), "--no-files", "--yes", "--db", str(db))
        done = batch(tmp_path, fake.base_url, str(file), *common, "--max-usd", "1", "--call-usd", "0.01")
        assert done.returncode == 0, done.stderr
        for receipt in map(json.loads, done.stdout.splitlines()):
            # two requests at the fake's prices ($0.00012 and $0.00013), and one call at $0.01
            assert abs(receipt["cost_usd"] - 0.01025) < 1e-9, receipt
        other = batch(tmp_path, fake.base_url, str(file), *common, "--max-usd", "1")
        assert other.returncode == 2
        assert "was started with --max-usd 1 and --call-usd 0.01: give the same" in other.stderr


def test_each_question_of_a_batch_is_traced_and_its_spans_add_up_to_its_receipt(tmp_path: Path) -> None:
    """Tracing reaches batch as every front (issue 38): one `invoke_agent` span per question,
    under its own trace, whose cost is the receipt's, with --yes its paid call as a tool span."""
    from test_telemetry_cli import spans_in

    file = questions(tmp_path, 2)
    with fake_venice(script(), tmp_path) as fake, paid_server(tmp_path) as (config, log):
        done = subprocess.run(
            [COMMAND, "batch", str(file), "--mcp-config", str(config), "--no-files", "--yes"],
            env=clean_env(tmp_path, fake.base_url, VENICE_MODEL="fake-model", OTEL_TRACES_EXPORTER="console"),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr
    receipts = {r["id"]: r for r in (json.loads(line) for line in done.stdout.splitlines())}
    spans = spans_in(done.stderr)
    questions_spans = [s for s in spans if s["name"] == "invoke_agent venice-agent"]
    assert len(questions_spans) == 2 == len({s["context"]["trace_id"] for s in questions_spans})
    assert sum(1 for s in spans if s["name"] == "execute_tool charge") == 2 == len(calls(log))
    spent = sum(s["attributes"]["venice_agent.cost.usd"] for s in questions_spans)
    assert abs(spent - sum(r["cost_usd"] for r in receipts.values())) < 1e-12


MONEY_OPTIONS = [
    ("--max-usd", "0", "--max-usd: must be a finite number more than 0, not 0"),
    ("--max-usd", "-1", "--max-usd: must be a finite number more than 0, not -1"),
    ("--max-usd", "inf", "--max-usd: must be a finite number more than 0, not inf"),
    ("--max-usd", "1e400", "--max-usd: must be a finite number more than 0, not inf"),
    ("--max-usd", "nan", "--max-usd: must be a finite number more than 0, not nan"),
    ("--call-usd", "-0.01", "--call-usd: must be a finite number, 0 or more, not -0.01"),
    ("--call-usd", "inf", "--call-usd: must be a finite number, 0 or more, not inf"),
    ("--call-usd", "nan", "--call-usd: must be a finite number, 0 or more, not nan"),
]


@pytest.mark.parametrize(
    ("flag", "given", "said"), MONEY_OPTIONS, ids=[f"{f}={g}" for f, g, _ in MONEY_OPTIONS]
)
def test_a_batch_money_option_that_is_no_amount_is_refused_before_anything_runs(
    tmp_path: Path, flag: str, given: str, said: str
) -> None:
    """A cap of 0 was once taken for no cap (the request went out with no limit and spent more
    than the cap), and an infinite one ended in an internal error: each is now one line, status 2,
    as a bad --max-usd is everywhere else, before the model hears anything."""
    file = questions(tmp_path, 1)
    with fake_venice(script(), tmp_path) as fake:
        done = batch(
            tmp_path, fake.base_url, str(file), "--no-mcp", "--db", str(tmp_path / "b.sqlite"), flag, given
        )
        assert fake.chat_bodies() == []
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [f"venice-agent batch: bad setting: {said}"]
    assert done.stdout == ""
