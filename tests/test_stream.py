"""Stream assembly: tool calls joined by id (Venice repeats `index`), fields kept as received."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from venice_terminal_agent.model.stream import Assembler, merge


def chunk(delta: dict, finish: str | None = None, **extra) -> dict:
    return {"model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}


def call_deltas(index: int, call_id: str, name: str, arguments: str) -> list[dict]:
    half = len(arguments) // 2
    return [
        chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                               "function": {"name": name, "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[:half]}}]}),
        chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]}),
    ]  # fmt: skip


def assemble(chunks: list[dict]) -> tuple[str, dict]:
    assembler = Assembler()
    text = "".join(assembler.feed(c) for c in chunks)
    return text, assembler.finish().message


def test_text_streams_out_and_comes_back_whole() -> None:
    text, message = assemble([chunk({"role": "assistant", "content": ""}), chunk({"content": "Hel"}),
                              chunk({"content": "lo"}), chunk({}, "stop")])  # fmt: skip
    assert text == "Hello"
    assert message == {"role": "assistant", "content": "Hello"}


def test_three_parallel_calls_with_one_repeated_index_stay_three() -> None:
    chunks = [chunk({"role": "assistant"})]
    chunks += call_deltas(0, "a", "get_time", '{"tz": "UTC"}')
    chunks += call_deltas(0, "b", "convert_time", '{"to": "CET"}')
    chunks += call_deltas(0, "c", "get_time", '{"tz": "JST"}')
    _, message = assemble([*chunks, chunk({}, "tool_calls")])
    calls = message["tool_calls"]
    assert [c["id"] for c in calls] == ["a", "b", "c"]
    assert [c["function"]["name"] for c in calls] == ["get_time", "convert_time", "get_time"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [
        {"tz": "UTC"},
        {"to": "CET"},
        {"tz": "JST"},
    ]
    assert message["content"] is None  # kept as the API sends it on a tool-call turn


def test_interleaved_calls_by_distinct_index_are_joined_by_index() -> None:
    a, b = call_deltas(0, "a", "f", '{"x": 1}'), call_deltas(1, "b", "g", '{"y": 2}')
    chunks = [a[0], b[0], a[1], b[1], a[2], b[2]]
    _, message = assemble(chunks)
    assert [(c["id"], json.loads(c["function"]["arguments"])) for c in message["tool_calls"]] == [
        ("a", {"x": 1}),
        ("b", {"y": 2}),
    ]


def test_a_call_without_id_gets_one_and_a_second_name_starts_a_new_call() -> None:
    chunks = [
        chunk({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": '{"x": 1}'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"name": "g", "arguments": "{}"}}]}),
    ]
    _, message = assemble(chunks)
    assert [(c["id"], c["function"]["name"]) for c in message["tool_calls"]] == [
        ("call_1", "f"),
        ("call_2", "g"),
    ]


def test_unknown_and_reasoning_fields_are_kept_and_no_null_is_added() -> None:
    details = [{"type": "reasoning.encrypted", "data": "abc", "index": 0}]
    chunks = [
        chunk(
            {"role": "assistant", "reasoning_details": details, "thought_signature": "sig", "refusal": None}
        ),
        chunk({"reasoning_content": "I should "}),
        chunk({"reasoning_content": "call f"}),
        chunk({"reasoning_details": [{"type": "reasoning.encrypted", "data": "def", "index": 0}]}),
        *call_deltas(0, "a", "f", "{}"),
        chunk({"tool_calls": [{"index": 0, "extra_content": {"google": {"thought_signature": "t"}}}]}),
        chunk({}, "tool_calls"),
        {
            "model": "m",
            "choices": [],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
        },
    ]
    assembler = Assembler()
    for c in chunks:
        assembler.feed(c)
    done = assembler.finish()
    assert done.message["reasoning_content"] == "I should call f"
    assert done.message["thought_signature"] == "sig"
    assert done.message["reasoning_details"] == [
        {"type": "reasoning.encrypted", "data": "abcdef", "index": 0}
    ]
    assert done.message["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "t"}}
    assert "refusal" not in done.message
    assert done.finish_reason == "tool_calls"
    assert done.usage == {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}


def test_an_empty_answer_is_an_empty_string_not_null() -> None:
    _, message = assemble([chunk({"role": "assistant"}), chunk({}, "stop")])
    assert message == {"role": "assistant", "content": ""}


def test_merge_joins_text_and_objects_and_replaces_the_rest() -> None:
    assert merge({"a": "x", "n": 1}, {"a": "y", "n": 2, "b": None}) == {"a": "xy", "n": 2}
    assert merge([{"index": 0, "text": "a"}], [{"index": 1, "text": "b"}]) == [
        {"index": 0, "text": "a"},
        {"index": 1, "text": "b"},
    ]


ids = st.lists(st.text("abcdef0123456789", min_size=4, max_size=8), min_size=1, max_size=6, unique=True)


@given(ids, st.integers(1, 5))
def test_any_number_of_calls_sharing_an_index_keep_their_arguments(call_ids: list[str], pieces: int) -> None:
    chunks = []
    for n, call_id in enumerate(call_ids):
        arguments = json.dumps({"n": n, "id": call_id})
        step = max(1, len(arguments) // pieces)
        chunks.append(
            chunk({"tool_calls": [{"index": 0, "id": call_id, "function": {"name": "f", "arguments": ""}}]})
        )
        for start in range(0, len(arguments), step):
            part = arguments[start : start + step]
            chunks.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]}))
    _, message = assemble(chunks)
    assert [json.loads(c["function"]["arguments"]) for c in message["tool_calls"]] == [
        {"n": n, "id": call_id} for n, call_id in enumerate(call_ids)
    ]
