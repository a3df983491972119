"""`--schema`: an answer that matches a JSON schema, sent as Venice's json_schema response
format where the model takes one, checked, asked again once, then `schema_mismatch`.

The real command against the fake server; the requests it recorded are what Venice would get."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_support import fake_venice, run_cli

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
QUESTION = "Which city is the capital of France?"
SCHEMA_MISMATCH = 12


def takes_schema(takes: bool, replies: list[dict[str, Any]]) -> dict[str, Any]:
    capabilities = {"supportsFunctionCalling": True, "supportsResponseSchema": takes}
    return {"model_spec": {"capabilities": capabilities}, "replies": replies}


def ask(folder: Path, base_url: str, schema: str = json.dumps(SCHEMA)) -> Any:
    return run_cli(folder, base_url, "--no-mcp", "--json", "--schema", schema, QUESTION)


def test_the_schema_goes_as_response_format_and_the_receipt_carries_the_parsed_answer(tmp_path: Path) -> None:
    with fake_venice(takes_schema(True, [{"text": '{"city": "Paris"}'}]), tmp_path) as fake:
        done = ask(tmp_path, fake.base_url)
        (body,) = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "strict": True, "schema": SCHEMA},
    }
    assert body["messages"][-1]["content"] == QUESTION
    got = json.loads(done.stdout)
    assert got["parsed"] == {"city": "Paris"}
    assert got["answer"] == '{"city": "Paris"}'


def test_a_mismatch_goes_back_once_with_the_error(tmp_path: Path) -> None:
    script = takes_schema(True, [{"text": '{"town": "Paris"}'}, {"text": '{"city": "Paris"}'}])
    with fake_venice(script, tmp_path) as fake:
        done = ask(tmp_path, fake.base_url)
        _, second = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    retry = second["messages"][-1]
    assert retry["role"] == "user"
    assert (
        "does not match the JSON schema" in retry["content"]
        and "'city' is a required property" in retry["content"]
    )
    assert second["messages"][-2]["content"] == '{"town": "Paris"}'  # its own answer, as sent
    assert json.loads(done.stdout)["parsed"] == {"city": "Paris"}


def test_a_second_mismatch_ends_the_question_schema_mismatch(tmp_path: Path) -> None:
    script = takes_schema(True, [{"text": "Paris, of course."}, {"text": '{"city": 75}'}])
    with fake_venice(script, tmp_path) as fake:
        done = ask(tmp_path, fake.base_url)
        assert len(fake.chat_bodies()) == 2
    assert done.returncode == SCHEMA_MISMATCH
    got = json.loads(done.stdout)
    assert got["stopped_because"] == "schema_mismatch"
    assert "at city: 75 is not of type 'string'" in got["refusal"]
    assert got["parsed"] is None


def test_a_retry_is_said_on_its_own_line_between_the_two_answers(tmp_path: Path) -> None:
    script = takes_schema(True, [{"text": "The capital is Paris"}, {"text": "still not json"}])
    with fake_venice(script, tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "--no-mcp", "--schema", json.dumps(SCHEMA), QUESTION)
    assert done.returncode == SCHEMA_MISMATCH
    assert done.stdout.splitlines()[:2] == ["The capital is Paris", "still not json"]  # never one text
    assert (
        "the answer did not match --schema: it is not JSON (Expecting value: line 1 column 1 (char 0));"
        " asking the model once more"
    ) in done.stderr.splitlines()


def test_a_model_without_schemas_is_said_so_and_gets_the_schema_in_the_question(tmp_path: Path) -> None:
    schema_file = tmp_path / "answer.json"
    schema_file.write_text(json.dumps(SCHEMA))
    with fake_venice(takes_schema(False, [{"text": '```json\n{"city": "Paris"}\n```'}]), tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, f"@{schema_file}")
        (body,) = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    assert "fake-model takes no response schema (/models supportsResponseSchema false)" in done.stderr
    assert "response_format" not in body
    question = body["messages"][-1]["content"]
    assert question.startswith(QUESTION) and json.dumps(SCHEMA) in question
    assert json.loads(done.stdout)["parsed"] == {"city": "Paris"}


def test_a_schema_that_is_not_one_is_refused_before_any_request(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake:
        not_json = ask(tmp_path, fake.base_url, "{city")
        not_schema = ask(tmp_path, fake.base_url, '{"type": 12}')
        no_file = ask(tmp_path, fake.base_url, "@missing.json")
        assert fake.chat_bodies() == []
    assert not_json.returncode == not_schema.returncode == no_file.returncode == 2
    assert "--schema: not JSON" in not_json.stderr
    assert "--schema: not a valid JSON schema" in not_schema.stderr
    assert no_file.stderr.splitlines() == ["venice-agent: --schema @missing.json: no such file"]


def test_a_remote_reference_is_refused_and_never_fetched(tmp_path: Path) -> None:
    """jsonschema's old resolution fetched an `http://` `$ref` (user agent "python-jsonschema
    (deprecated $ref resolution)") and then crashed; a schema never makes the agent dial out."""
    with fake_venice(takes_schema(True, [{"text": '{"city": "Paris"}'}]), tmp_path) as fake:
        remote = {"type": "object", "properties": {"city": {"$ref": f"{fake.base_url}/city.json"}}}
        done = ask(tmp_path, fake.base_url, json.dumps(remote))
        seen = [request["path"] for request in fake.requests()]
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert (
        f"$ref '{fake.base_url}/city.json' points outside the schema, and a schema is never fetched"
        in done.stderr
    )
    assert not [path for path in seen if path.endswith("city.json")] and fake.chat_bodies() == []


def test_a_local_reference_is_followed(tmp_path: Path) -> None:
    local = {
        "type": "object",
        "properties": {"city": {"$ref": "#/$defs/city"}},
        "required": ["city"],
        "$defs": {"city": {"type": "string", "minLength": 2}},
    }
    replies = [{"text": '{"city": "P"}'}, {"text": '{"city": "Paris"}'}]
    with fake_venice(takes_schema(True, replies), tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, json.dumps(local))
        assert len(fake.chat_bodies()) == 2  # the first answer did not match the referenced part
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["parsed"] == {"city": "Paris"}


def test_a_reference_to_nothing_is_refused_before_any_request(tmp_path: Path) -> None:
    with fake_venice([], tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, json.dumps({"$ref": "#/$defs/nowhere"}))
        assert fake.chat_bodies() == []
    assert done.returncode == 2 and "$ref '#/$defs/nowhere' points at nothing in the schema" in done.stderr
