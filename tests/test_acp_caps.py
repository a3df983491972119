"""`venice-agent acp`'s caps, as the README's table of fronts lists them: `--max-rounds`,
`--max-usd` (tests/test_acp.py) and `--session-max-usd`, each ending the editor's turn with
the exit on its receipt, the request it would have passed never sent."""

from __future__ import annotations

from pathlib import Path

from acp import text_block

from cli_support import fake_venice
from test_acp import allow, call, editor_on

SPEC = {"pricing": {"input": {"usd": 1}, "output": {"usd": 10}}, "maxCompletionTokens": 1000}


async def test_max_rounds_ends_the_turn_on_max_rounds_after_its_last_request(tmp_path: Path) -> None:
    script = {"replies": [call("list_files", path="."), call("list_files", path="..")], "model_spec": SPEC}
    with fake_venice(script, tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow, "--no-mcp", "--max-rounds", "1") as (_editor, conn):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            done = await conn.prompt(session_id=session.session_id, prompt=[text_block("list")])
        bodies = fake.chat_bodies()
    receipt = done.field_meta["venice-agent/receipt"]
    assert receipt["stopped_because"] == "max_rounds", receipt
    assert done.stop_reason == "max_turn_requests"
    assert len(bodies) == 1  # one round: the second request would have been past the cap


async def test_the_session_cap_spans_the_questions_of_one_editor_session(tmp_path: Path) -> None:
    one = {"text": "one", "usage": {"completion_tokens": 900}}  # $0.009 of the $0.015
    script = {"replies": [one, {"text": "two"}, {"text": "fresh"}], "model_spec": SPEC}
    with fake_venice(script, tmp_path) as fake:
        args = ("--no-mcp", "--session-max-usd", "0.015")
        async with editor_on(tmp_path, fake, allow, *args, MAX_COMPLETION_TOKENS="1000") as (_editor, conn):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            first = await conn.prompt(session_id=session.session_id, prompt=[text_block("one")])
            second = await conn.prompt(session_id=session.session_id, prompt=[text_block("two")])
            sent = len(fake.chat_bodies())
            other = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            fresh = await conn.prompt(session_id=other.session_id, prompt=[text_block("fresh")])
    assert first.field_meta["venice-agent/receipt"]["stopped_because"] == "answered"
    refused = second.field_meta["venice-agent/receipt"]
    assert second.stop_reason == "refusal" and refused["stopped_because"] == "cost_cap"
    assert "of the $0.015 session cap is left" in refused["refusal"]
    assert sent == 1  # the second question's request was never sent
    assert (
        fresh.field_meta["venice-agent/receipt"]["stopped_because"] == "answered"
    )  # its own session, its own cap
