"""Money errors told apart: a 402 is never retried and says which money ran out (the balance,
the key's USD or DIEM limit) and what to do; `doctor` shows the balance and the key's rate
limits; a --max-usd above the balance is said before the question."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_support import COMMAND, clean_env, fake_venice, run_cli
from venice_terminal_agent.core.errors import PaymentError
from venice_terminal_agent.model import RetryPolicy, VeniceClient
from venice_terminal_agent.testing import FakeVenice

PRICED = {"pricing": {"input": {"usd": 1}, "output": {"usd": 10}}, "maxCompletionTokens": 1000}
USER = [{"role": "user", "content": "hi"}]


def refused(code: str | None, words: str) -> dict:
    body: dict = {"error": words}
    if code is not None:
        body["code"] = code
    return {"status": 402, "error": body}


CASES = [
    ("INSUFFICIENT_BALANCE", "Insufficient USD or Diem balance to complete request",
     "the account's balance is out", "top up at https://venice.ai/settings/api"),
    ("API_KEY_USD_SPEND_LIMIT_EXCEEDED", "API key USD spend limit exceeded",
     "this API key reached its USD spend limit", "raise the key's USD limit at https://venice.ai/settings/api"),
    ("API_KEY_DIEM_SPEND_LIMIT_EXCEEDED", "API key DIEM spend limit exceeded",
     "this API key reached its DIEM spend limit", "raise the key's DIEM limit at https://venice.ai/settings/api"),
    (None, "Payment required", "the model server asks for payment", "check the balance at"),
]  # fmt: skip


@pytest.mark.parametrize(("code", "words", "what", "todo"), CASES, ids=[c[0] or "no-code" for c in CASES])
def test_a_402_is_asked_once_and_says_which_money_ran_out(
    tmp_path: Path, code: str | None, words: str, what: str, todo: str
) -> None:
    with fake_venice({"replies": [refused(code, words), {"text": "never asked"}]}, tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "--no-mcp", "--json", "hi")
        bodies = fake.chat_bodies()
    assert len(bodies) == 1  # never retried: waiting does not refill an account
    receipt = json.loads(done.stdout)
    assert receipt["stopped_because"] == "model_error"
    assert receipt["refusal"].startswith(f"{what} (402 Payment Required: {words}")
    assert todo in receipt["refusal"]
    others = [c[2] for c in CASES if c[2] != what]
    assert not any(other in receipt["refusal"] for other in others)
    assert done.returncode == 2  # the person's to fix, as a rejected key is


async def test_the_client_raises_a_payment_error_with_its_code_and_never_sleeps() -> None:
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    script = [refused("API_KEY_USD_SPEND_LIMIT_EXCEEDED", "limit"), {"text": "never"}]
    async with FakeVenice(script) as fake:
        async with VeniceClient("k", fake.base_url, retry=RetryPolicy(sleep=sleep)) as client:
            with pytest.raises(PaymentError) as caught:
                await client.complete("fake-model", USER)
    assert caught.value.code == "API_KEY_USD_SPEND_LIMIT_EXCEEDED" and caught.value.exit_status == 2
    assert sleeps == [] and len(fake.chat_requests) == 1


BALANCE = {"canConsume": True, "consumptionCurrency": "DIEM", "balances": {"diem": 90.5, "usd": 25},
           "diemEpochAllocation": 100}  # fmt: skip
LIMITS = {"data": {"accessPermitted": True, "apiTier": {"id": "paid", "isCharged": True},
                   "balances": {"USD": 25, "DIEM": 90.5}, "keyExpiration": None,
                   "nextEpochBegins": "2026-12-02T00:00:00.000Z",
                   "rateLimits": [{"apiModelId": "other", "rateLimits": [{"amount": 5, "type": "RPM"}]},
                                  {"apiModelId": "fake-model", "rateLimits": [
                                      {"amount": 500, "type": "RPM"}, {"amount": 1000000, "type": "TPM"}]}]}}  # fmt: skip


def doctor(tmp_path: Path, base_url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [COMMAND, "doctor", "--no-mcp"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=clean_env(tmp_path, base_url, VENICE_MODEL="fake-model"),
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


def test_doctor_shows_the_balance_and_the_keys_rate_limits_for_the_model(tmp_path: Path) -> None:
    with fake_venice({"replies": [], "balance": BALANCE, "rate_limits": LIMITS}, tmp_path) as fake:
        done = doctor(tmp_path, fake.base_url)
        asked = [(seen["method"], seen["path"]) for seen in fake.requests()]
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    assert any(line.split() == ["✓", "balance", "$25.00", "·", "90.5", "of", "100", "DIEM", "this", "epoch",
                                "·", "paying", "in", "DIEM"] for line in lines), lines  # fmt: skip
    limits = next(line for line in lines if line.startswith("✓ rate limits"))
    assert limits.split(None, 3)[3] == "fake-model: 500 RPM, 1,000,000 TPM · tier paid"
    assert ("GET", "/api/v1/billing/balance") in asked and ("GET", "/api/v1/api_keys/rate_limits") in asked


def test_doctor_says_an_empty_balance_fails_and_a_key_that_may_not_read_it(tmp_path: Path) -> None:
    empty = {**BALANCE, "canConsume": False, "balances": {"diem": 0, "usd": 0}}
    script = {"replies": [], "balance": empty, "rate_limits": {"status": 401}}
    with fake_venice(script, tmp_path) as fake:
        done = doctor(tmp_path, fake.base_url)
    assert done.returncode == 2
    lines = done.stdout.splitlines()
    balance = lines.index(next(line for line in lines if line.startswith("✗ balance")))
    assert "cannot pay for requests" in lines[balance]
    assert lines[balance + 1].strip().endswith("→ top up at https://venice.ai/settings/api")
    assert any(
        line.startswith("✓ rate limits") and "this key may not read it (401)" in line for line in lines
    )


def test_doctor_on_a_server_without_billing_says_nothing_of_it(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake:
        done = doctor(tmp_path, fake.base_url)
    assert done.returncode == 0, done.stdout
    assert "balance" not in done.stdout and "rate limits" not in done.stdout


@pytest.mark.parametrize("where", ["header", "billing"])
def test_a_max_usd_above_the_balance_is_said_before_the_question(tmp_path: Path, where: str) -> None:
    script: dict = {"replies": [{"text": "Fine."}], "model_spec": PRICED}
    if where == "header":
        script["headers"] = {"x-venice-balance-usd": "0.50"}
    else:
        script["balance"] = {**BALANCE, "consumptionCurrency": "USD", "balances": {"usd": 0.5, "diem": None}}
    with fake_venice(script, tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "--no-mcp", "--max-usd", "2", "hi")
        asked = [seen["path"] for seen in fake.requests()]
    assert done.returncode == 0, done.stderr
    said = "venice-agent: --max-usd $2.00 is above the account's balance ($0.50): a question may end on an empty balance (402) before the cap"
    assert said in done.stderr.splitlines()
    assert ("/api/v1/billing/balance" in asked) is (where == "billing")
    assert done.stdout.startswith("Fine.")


def test_a_max_usd_within_the_balance_or_with_diem_says_nothing(tmp_path: Path) -> None:
    for headers in (
        {"x-venice-balance-usd": "5"},
        {"x-venice-balance-usd": "0.5", "x-venice-balance-diem": "10"},
    ):
        script = {"replies": [{"text": "Fine."}], "model_spec": PRICED, "headers": headers}
        with fake_venice(script, tmp_path) as fake:
            done = run_cli(tmp_path, fake.base_url, "--no-mcp", "--max-usd", "2", "hi")
        assert done.returncode == 0, done.stderr
        assert "above the account's balance" not in done.stderr
