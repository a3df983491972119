"""Private means private on every front that asks a model, not only the terminal's
(tests/test_e2ee.py): the editor's (`acp`), the service's (`serve`) and the MCP server's (`mcp`).
An E2EE model's question goes sealed and its answer comes back decrypted; an attestation that
does not prove it is fresh ends the question private_failed with nothing sent in plaintext."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from acp import text_block
from mcp import Client, StdioServerParameters

from cli_support import COMMAND, clean_env, fake_venice
from serve_support import served
from test_acp import allow, editor_on
from test_e2ee import E2EE_SPEC

QUESTION = "What is the capital of Atlantis?"
FRONTS = ["acp", "serve", "mcp"]


def script(**more: Any) -> dict[str, Any]:
    return {"models": ["e2ee-fake"], "model_spec": E2EE_SPEC, "tee": True, **more}


def completions(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat requests the server saw, each with its body (what would hold plaintext)."""
    sent = [r for r in requests if r["path"].endswith("/chat/completions")]
    assert all(r["body"]["messages"] for r in sent)
    return sent


async def ask_on(front: str, tmp_path: Path, fake: Any) -> dict[str, Any]:
    """The question asked on `front`, on model e2ee-fake: the receipt it hands back."""
    if front == "acp":
        async with editor_on(tmp_path, fake, allow, "--no-mcp", "--model", "e2ee-fake") as (_editor, conn):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            done = await conn.prompt(session_id=session.session_id, prompt=[text_block(QUESTION)])
        receipt = done.field_meta["venice-agent/receipt"]
        assert done.stop_reason == ("end_turn" if receipt["stopped_because"] == "answered" else "refusal")
        return receipt
    if front == "serve":
        env = clean_env(tmp_path, fake.base_url, VENICE_MODEL="e2ee-fake")
        args = ("--store", str(tmp_path / "bot.db"), "--no-mcp")
        async with (
            served(tmp_path, *args, env=env) as server,
            httpx2.AsyncClient(base_url=server.url, timeout=60) as http,
        ):
            reply = (await http.post("/v1/chats/c/messages", json={"text": QUESTION})).json()
        assert (reply["receipt"]["refusal"] or reply["receipt"]["answer"]) in reply[
            "text"
        ]  # what the person reads
        return reply["receipt"]
    params = StdioServerParameters(
        command=COMMAND,
        args=["mcp", "--no-mcp", "--model", "e2ee-fake"],
        env=clean_env(tmp_path, fake.base_url),
        cwd=str(tmp_path),
    )
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:  # type: ignore[arg-type]
        result = await client.call_tool("ask", {"question": QUESTION})
    return result.structured_content["receipt"]


@pytest.mark.parametrize("front", FRONTS)
async def test_the_question_goes_sealed_and_its_answer_is_decrypted(tmp_path: Path, front: str) -> None:
    with fake_venice(script(replies=[{"text": "Atlantis has no capital."}]), tmp_path) as fake:
        receipt = await ask_on(front, tmp_path, fake)
        requests = fake.requests()
    assert receipt["stopped_because"] == "answered" and receipt["answer"] == "Atlantis has no capital."
    assert receipt["e2ee"]["encrypted"] is True
    assert len(completions(requests)) == 1
    assert "Atlantis" not in json.dumps(requests)


@pytest.mark.parametrize("front", FRONTS)
async def test_a_stale_attestation_sends_no_question(tmp_path: Path, front: str) -> None:
    with fake_venice(script(tee={"fault": "stale_nonce"}), tmp_path) as fake:
        receipt = await ask_on(front, tmp_path, fake)
        requests = fake.requests()
    assert (
        receipt["stopped_because"] == "private_failed"
        and "does not echo our fresh nonce" in receipt["refusal"]
    )
    assert completions(requests) == []
    assert "Atlantis" not in json.dumps(requests)
