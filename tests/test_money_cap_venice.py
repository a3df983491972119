"""The money cap against Venice's own model list (testing/venice_models.json: prices, and no
`maxCompletionTokens`, as every Venice text model lists itself), on the real command: each
capped request asks for what the money left can pay, a cut answer says the cap shortened it,
Venice's 400 naming a model's output maximum is asked again once with it, and a `--model` the
list does not have is refused before any chat request (issue 34)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_support import fake_venice, run_cli
from venice_terminal_agent.core.defaults import CAPPED_OUTPUT_TOKENS

MODEL = "zai-org-glm-5-2"  # $1.40 in, $4.40 out a million tokens; no maxCompletionTokens
INPUT, OUTPUT = 1.4, 4.4
LONG = " ".join(["word"] * 2000)  # a piece a token, as the fake's `output_limit` profile counts


def venice(**more: Any) -> dict[str, Any]:
    return {"listing": "venice", **more}


def ask(folder: Path, base_url: str, *args: str, **env: str | None) -> Any:
    return run_cli(folder, base_url, "--no-mcp", *args, VENICE_MODEL=env.pop("VENICE_MODEL", MODEL), **env)


def affordable(body: dict[str, Any], left: float) -> int:
    """The output tokens `left` USD pays for after the request's worst-case input (each byte
    sent counted as a token at the input price), as the agent computes it before the request."""
    sent = json.dumps([*body["messages"], *body.get("tools", [])], ensure_ascii=False, default=str)
    return int((left - len(sent.encode()) * INPUT / 1e6) * 1e6 / OUTPUT)


@pytest.mark.parametrize(
    ("args", "env"),
    [(("--max-usd", "0.05"), {}), (("--session-max-usd", "0.05"), {}), ((), {"MAX_USD": "0.05"})],
    ids=["--max-usd", "--session-max-usd", "MAX_USD"],
)
def test_a_money_cap_answers_on_a_venice_model_without_an_output_limit(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str]
) -> None:
    with fake_venice(venice(replies=[{"text": "Paris."}]), tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, *args, "--json", "capital of France?", **env)
        (body,) = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"] == "Paris."
    # $0.05 pays more than the ceiling: the request asks for the ceiling, never more.
    assert affordable(body, 0.05) > CAPPED_OUTPUT_TOKENS
    assert body["max_completion_tokens"] == CAPPED_OUTPUT_TOKENS


def test_each_capped_request_asks_for_what_the_money_left_pays(tmp_path: Path) -> None:
    with fake_venice(venice(replies=[{"text": "Paris."}]), tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, "--max-usd", "0.01", "capital of France?")
        (body,) = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    assert affordable(body, 0.01) - 1 <= body["max_completion_tokens"] <= affordable(body, 0.01)
    assert body["max_completion_tokens"] < CAPPED_OUTPUT_TOKENS


def test_a_tiny_cap_shortens_the_answer_and_says_so(tmp_path: Path) -> None:
    script = venice(profile="output_limit", replies=[{"text": LONG}])
    with fake_venice(script, tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, "--max-usd", "0.004", "--json", "tell me everything")
        (body,) = fake.chat_bodies()
    limit = body["max_completion_tokens"]
    assert 0 < limit < 2000
    assert done.returncode == 9, done.stderr  # output_limit
    receipt = json.loads(done.stdout)
    assert receipt["stopped_because"] == "output_limit" and receipt["partial"] is True
    assert receipt["answer"].split() == ["word"] * limit  # kept, partial
    line = (
        f"the money cap shortened the answer: it was cut at {limit:,} tokens, the output limit the "
        "cap left for this request (raise --max-usd, or set MAX_COMPLETION_TOKENS)"
    )
    assert receipt["refusal"] == line and line in done.stderr


def test_a_cap_that_cannot_pay_a_short_answer_is_refused_before_the_request(tmp_path: Path) -> None:
    with fake_venice(venice(replies=[]), tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, "--max-usd", "0.0005", "capital of France?")
        bodies = fake.chat_bodies()
    assert done.returncode == 8 and bodies == []  # cost_cap, nothing sent
    assert "stopped before model request 1: it could cost up to $0.00" in done.stderr
    assert "of the $0.0005 cap is left" in done.stderr


def test_the_answer_from_what_was_gathered_is_capped_too(tmp_path: Path) -> None:
    """--budget 1: the second call is not run, and the last request (no tools) asks for an
    answer from what was gathered: under the cap it carries its own limit as well."""
    calls = [{"tool_calls": [{"name": "list_files", "arguments": {"path": path}}]} for path in (".", "..")]
    script = venice(replies=[*calls, {"text": "From what I have: a few files."}])
    with fake_venice(script, tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, "--max-usd", "0.01", "--budget", "1", "list the files")
        bodies = fake.chat_bodies()
    assert done.returncode == 3, done.stderr  # budget, with a partial answer
    assert "tools" not in bodies[-1]
    for body in bodies:
        assert 0 < body["max_completion_tokens"] <= affordable(body, 0.01)


@pytest.mark.parametrize("profile", [[], ["no_streamed_tools"]], ids=["streamed", "whole"])
def test_venices_400_naming_the_maximum_is_asked_again_once_and_kept(tmp_path: Path, profile: list) -> None:
    """The model's hidden maximum is 4096: the first request asks for 8192, Venice answers 400
    naming 4096, the same request goes again with 4096 (counted once: one round, one cost), and
    the session's next question sends 4096 at once. `whole`: requests with tools go unstreamed."""
    script = venice(
        profile=profile, output_maximum={MODEL: 4096}, replies=[{"text": "One."}, {"text": "Two."}]
    )
    with fake_venice(script, tmp_path) as fake:
        done = run_cli(
            tmp_path,
            fake.base_url,
            "--no-mcp",
            "--max-usd",
            "0.05",
            stdin="first\nsecond\n",
            VENICE_MODEL=MODEL,
        )
        seen = [r for r in fake.requests() if r["path"].endswith("/chat/completions")]
    assert done.returncode == 0, done.stderr
    refused = [r for r in seen if r["status"] == 400]
    assert [r["body"]["max_completion_tokens"] for r in refused] == [CAPPED_OUTPUT_TOKENS]
    answered = [
        r["body"]["max_completion_tokens"] for r in seen if r["status"] == 200 and r["body"].get("messages")
    ]
    assert answered[-2:] == [4096, 4096]  # the retry, then the next question directly
    assert "One." in done.stdout and "Two." in done.stdout
    one_request = f"${(10 * INPUT + 5 * OUTPUT) / 1e6:.6f}"  # the fake's usage: 10 in, 5 out
    receipts = [line for line in done.stdout.splitlines() if line.startswith("stopped:")]
    assert receipts == [f"stopped: answered · 0 calls · 1 round · 15 tokens · {one_request} · 0% of 1M"] * 2


# --model ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "nearest"),
    [
        ((), "did you mean zai-org-glm-5-2?"),
        (("chat", "--chat", "t"), "did you mean zai-org-glm-5-2?"),
        (("serve", "--port", "0"), "did you mean zai-org-glm-5-2?"),
        (("acp",), "did you mean zai-org-glm-5-2?"),
        (("mcp",), "did you mean zai-org-glm-5-2?"),
    ],
    ids=["ask", "chat", "serve", "acp", "mcp"],
)
def test_a_model_the_list_does_not_have_is_refused_before_any_chat_request(
    tmp_path: Path, command: tuple[str, ...], nearest: str
) -> None:
    with fake_venice(venice(replies=[]), tmp_path) as fake:
        args = (*command, "--no-mcp") if command else ("--no-mcp", "hi")
        done = run_cli(tmp_path, fake.base_url, *args, stdin="hi\n", VENICE_MODEL="glm-5")
        bodies = fake.chat_bodies()
    # The terminal, chat and serve exit 2; the editor and MCP fronts stay up and refuse each
    # question in their own protocol (tests/test_acp.py, tests/test_mcp_front.py), saying why on stderr.
    assert done.returncode == (0 if command[:1] in (("acp",), ("mcp",)) else 2), done.stderr
    assert bodies == []
    assert "glm-5 is not a model" in done.stderr and nearest in done.stderr
    assert "Traceback" not in done.stderr


def test_the_nearest_ids_are_named_and_a_trait_or_a_feature_suffix_is_a_model(tmp_path: Path) -> None:
    with fake_venice(venice(replies=[{"text": "ok"}, {"text": "ok"}]), tmp_path) as fake:
        typo = ask(tmp_path, fake.base_url, "hi", VENICE_MODEL="lama-3.3-70")
        trait = ask(tmp_path, fake.base_url, "--model", "default", "hi")
        suffix = ask(tmp_path, fake.base_url, "--model", "llama-3.3-70b:enable_web_search=on", "hi")
        bodies = fake.chat_bodies()
    assert typo.returncode == 2 and "did you mean llama-3.3-70b?" in typo.stderr
    assert trait.returncode == 0, trait.stderr
    assert suffix.returncode == 0, suffix.stderr
    assert [body["model"] for body in bodies] == ["default", "llama-3.3-70b:enable_web_search=on"]


def test_a_server_whose_list_fails_is_asked_any_model_as_before(tmp_path: Path) -> None:
    script = {"models_error": {"status": 500}, "replies": [{"text": "ok"}]}
    with fake_venice(script, tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, "hi", VENICE_MODEL="anything")
        bodies = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    assert [body["model"] for body in bodies] == ["anything"]
