"""E2EE models, private or not at all: the real command against the fake server's TEE, which
speaks Venice's protocol with real cryptography (`testing/tee.py`).

What a user relies on: an encrypted question's every message leaves sealed for the attested
key, the answer is decrypted before it is shown, and any failure (attestation, key, a piece
of the answer, a model list that cannot say the model is E2EE) ends `private_failed` (status
10) with nothing sent in plaintext."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from cli_support import fake_venice, run_cli
from venice_terminal_agent import Exit

QUESTION = "What is the capital of Atlantis?"
E2EE_SPEC = {
    "capabilities": {"supportsE2EE": True, "supportsTeeAttestation": True, "supportsFunctionCalling": True}
}
PRIVATE_FAILED = 11


def script(**more: Any) -> dict[str, Any]:
    return {"models": ["e2ee-fake"], "model_spec": E2EE_SPEC, "tee": True, **more}


def ask(folder: Path, base_url: str, *args: str, model: str = "e2ee-fake") -> Any:
    return run_cli(folder, base_url, "--no-mcp", "--json", *args, QUESTION, VENICE_MODEL=model)


def receipt(done: Any) -> dict[str, Any]:
    return json.loads(done.stdout)


def no_plaintext_left(requests: list[dict[str, Any]]) -> None:
    """Nothing of the question, in any request the server saw, headers and query included."""
    seen = json.dumps(requests)
    assert "Atlantis" not in seen
    assert "careful assistant" not in seen  # our system prompt went sealed too


def test_an_e2ee_model_is_asked_encrypted_and_its_answer_decrypted(tmp_path: Path) -> None:
    with fake_venice(
        script(replies=[{"text": "Atlantis has no capital.", "reasoning_content": "hm"}]), tmp_path
    ) as fake:
        done = ask(tmp_path, fake.base_url)
        requests = fake.requests()
    assert done.returncode == 0, done.stderr
    got = receipt(done)
    assert got["answer"] == "Atlantis has no capital."
    # The attestation came first, for a fresh nonce the receipt names.
    attest = [r for r in requests if r["path"].endswith("/tee/attestation")]
    chats = [r for r in requests if r["path"].endswith("/chat/completions")]
    assert len(attest) == 1 and len(chats) == 1
    assert requests.index(attest[0]) < requests.index(chats[0])
    nonce = got["e2ee"]["verified"]["nonce"]
    assert re.fullmatch(r"[0-9a-f]{64}", nonce)
    assert f"nonce={nonce}" in attest[0]["query"] and "model=e2ee-fake" in attest[0]["query"]
    # The request: Venice's headers, every message sealed, no tools, E2EE asked for.
    headers, body = chats[0]["headers"], chats[0]["body"]
    assert re.fullmatch(r"04[0-9a-f]{128}", headers["x-venice-tee-client-pub-key"])
    assert re.fullmatch(r"04[0-9a-f]{128}", headers["x-venice-tee-model-pub-key"])
    assert headers["x-venice-tee-signing-algo"] == "ecdsa"
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    for message in body["messages"]:
        assert re.fullmatch(
            r"[0-9a-f]{186,}", message["content"]
        )  # key 65 + nonce 12 + tag 16 bytes at least
    assert "tools" not in body and "tool_choice" not in body
    assert body["venice_parameters"] == {"include_venice_system_prompt": False, "enable_e2ee": True}
    no_plaintext_left(requests)
    # The receipt: what was verified, what was not by us, and that tools were off.
    e2ee = got["e2ee"]
    assert e2ee["encrypted"] is True
    assert re.fullmatch(r"[0-9a-f]{64}", e2ee["verified"]["attestation_sha256"])
    assert e2ee["verified"]["model"] == "e2ee-fake"
    assert e2ee["request_ids"] == ["chatcmpl-fake-1"]
    assert any("certificate chain" in line for line in e2ee["not_verified_by_us"])
    assert "tools" in e2ee["off"]
    assert "tools  none: end-to-end encrypted" in done.stderr  # the banner says so
    assert "attestation is checked" in done.stderr


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("unverified", "Venice does not say it is verified"),
        ("stale_nonce", "does not echo our fresh nonce"),
        ("debug", "debug mode"),
        ("missing", "its attestation cannot be fetched"),
    ],
)
def test_an_attestation_that_does_not_pass_sends_no_question(tmp_path: Path, fault: str, reason: str) -> None:
    with fake_venice(script(tee={"fault": fault}), tmp_path) as fake:
        done = ask(tmp_path, fake.base_url)
        requests = fake.requests()
    assert done.returncode == PRIVATE_FAILED, done.stderr
    got = receipt(done)
    assert got["stopped_because"] == "private_failed"
    assert reason in got["refusal"] and "nothing was sent in plaintext" in got["refusal"]
    assert got["answer"] is None
    assert got["e2ee"]["encrypted"] is False and reason in got["e2ee"]["failed"]
    assert not [r for r in requests if r["path"].endswith("/chat/completions")]


def test_an_attestation_replayed_from_an_earlier_question_sends_no_question(tmp_path: Path) -> None:
    """Another's nonce: the server hands the second question the first one's whole attestation,
    which passed then. Only our fresh nonce proves the evidence is of now."""
    with fake_venice(script(tee={"fault": "replayed"}, replies=[{"text": "No capital."}]), tmp_path) as fake:
        first = ask(tmp_path, fake.base_url)
        second = ask(tmp_path, fake.base_url)
        requests = fake.requests()
    assert first.returncode == 0, first.stderr
    assert receipt(first)["answer"] == "No capital."
    assert second.returncode == PRIVATE_FAILED, second.stderr
    got = receipt(second)
    assert got["stopped_because"] == "private_failed" and "does not echo our fresh nonce" in got["refusal"]
    attestations = [r for r in requests if "/tee/attestation" in r["path"]]
    assert len(attestations) == 2
    assert len([r for r in requests if r["path"].endswith("/chat/completions")]) == 1  # the first's only
    no_plaintext_left(requests)


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("wrong_key", "does not decrypt with this session's key"),
        ("tampered", "does not decrypt with this session's key"),
        ("plaintext", "it is not encrypted"),
    ],
)
def test_a_piece_of_the_answer_that_does_not_decrypt_ends_the_question(
    tmp_path: Path, fault: str, reason: str
) -> None:
    """Never retried, never shown as text: the second piece here is the bad one."""
    with fake_venice(
        script(tee={"fault": fault}, replies=[{"text": "Atlantis sank long ago."}]), tmp_path
    ) as fake:
        done = ask(tmp_path, fake.base_url)
        requests = fake.requests()
    assert done.returncode == PRIVATE_FAILED, done.stderr
    got = receipt(done)
    assert got["stopped_because"] == "private_failed"
    assert reason in got["refusal"]
    assert got["answer"] is None
    assert "sank" not in done.stdout + done.stderr  # the plaintext piece was never printed
    assert len([r for r in requests if r["path"].endswith("/chat/completions")]) == 1  # not retried
    no_plaintext_left(requests)


@pytest.mark.parametrize(("model", "flags"), [("e2ee-fake", ()), ("private-model", ("--e2ee",))])
def test_a_model_list_that_cannot_be_read_sends_nothing(
    tmp_path: Path, model: str, flags: tuple[str, ...]
) -> None:
    """Venice's own CLI sent such a question in plaintext, with exit 0."""
    with fake_venice(script(models_error={"status": 500}), tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, *flags, model=model)
        requests = fake.requests()
    assert done.returncode == PRIVATE_FAILED, done.stderr
    got = receipt(done)
    assert got["stopped_because"] == "private_failed"
    assert "the model list cannot be read" in got["refusal"]
    assert [r["path"] for r in requests] == ["/api/v1/models"]  # no attestation, no chat


def test_e2ee_asked_of_a_model_without_it_sends_nothing(tmp_path: Path) -> None:
    plain = {"models": ["fake-model"], "tee": True}
    with fake_venice(plain, tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, "--e2ee", model="fake-model")
        requests = fake.requests()
    assert done.returncode == PRIVATE_FAILED
    assert "fake-model is not listed as supporting E2EE" in receipt(done)["refusal"]
    assert not [r for r in requests if r["path"].endswith("/chat/completions")]


def test_no_e2ee_asks_an_e2ee_model_in_plaintext_with_its_tools(tmp_path: Path) -> None:
    with fake_venice(script(replies=[{"text": "plain"}]), tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, "--no-e2ee")
        requests = fake.requests()
    assert done.returncode == 0, done.stderr
    assert "e2ee" not in receipt(done)
    (chat,) = [r for r in requests if r["path"].endswith("/chat/completions")]
    assert chat["body"]["messages"][-1]["content"] == QUESTION
    assert "x-venice-tee-client-pub-key" not in chat["headers"]
    assert chat["body"]["tools"]  # the built-in tools, as for any model
    assert not [r for r in requests if r["path"].endswith("/tee/attestation")]


@pytest.mark.parametrize("flags", [("--e2ee",), ()])
def test_attachments_are_refused_for_an_e2ee_model_before_any_request(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("secret notes")
    with fake_venice(script(), tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, *flags, "-a", str(notes))
        requests = fake.requests()
    assert done.returncode == 2
    assert "attachments cannot go to an end-to-end encrypted model" in done.stderr
    assert not [r for r in requests if r["path"].endswith("/chat/completions")]
    assert "secret notes" not in json.dumps(requests)


def test_tools_asked_for_by_name_are_refused_for_an_e2ee_model(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {}}))
    with fake_venice(script(), tmp_path) as fake:
        done = run_cli(
            tmp_path, fake.base_url, "--mcp-config", str(config), QUESTION, VENICE_MODEL="e2ee-fake"
        )
        requests = fake.requests()
    assert done.returncode == 2
    assert "Venice allows no tools with E2EE" in done.stderr
    assert not [r for r in requests if r["path"].endswith("/chat/completions")]


def test_a_schema_goes_sealed_in_the_question_and_the_decrypted_answer_is_checked(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"capital": {"type": "string"}}, "required": ["capital"]}
    with fake_venice(script(replies=[{"text": '{"capital": "Poseidonis"}'}]), tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, "--schema", json.dumps(schema))
        requests = fake.requests()
    assert done.returncode == 0, done.stderr
    assert receipt(done)["parsed"] == {"capital": "Poseidonis"}
    (chat,) = [r for r in requests if r["path"].endswith("/chat/completions")]
    assert "response_format" not in chat["body"]
    assert "capital" not in json.dumps(requests)  # neither the schema nor the answer in the clear
    no_plaintext_left(requests)


def test_a_model_named_e2ee_that_the_list_does_not_describe_sends_nothing(tmp_path: Path) -> None:
    listed = [{"id": "e2ee-ghost", "object": "model", "type": "text", "model_spec": {"name": "ghost"}}]
    with fake_venice(script(listing=listed, model_spec={}), tmp_path) as fake:  # no capabilities said
        done = ask(tmp_path, fake.base_url, model="e2ee-ghost")
        requests = fake.requests()
    assert done.returncode == PRIVATE_FAILED
    assert "the model list does not say" in receipt(done)["refusal"]
    assert not [r for r in requests if r["path"].endswith("/chat/completions")]


def test_a_model_the_list_does_not_have_sends_nothing(tmp_path: Path) -> None:
    with fake_venice(script(), tmp_path) as fake:  # the list has e2ee-fake, not e2ee-ghost
        done = ask(tmp_path, fake.base_url, model="e2ee-ghost")
        requests = fake.requests()
    assert done.returncode == 2 and "did you mean e2ee-fake?" in done.stderr
    assert not [r for r in requests if r["path"].endswith("/chat/completions")]


async def test_every_message_of_a_conversation_goes_sealed_and_a_retry_resends_it_sealed() -> None:
    """Through the Python API on the in-process fake: the second question's request carries the
    first answer sealed too, and a 503 retried sends the same sealed request again."""
    from venice_terminal_agent.agent import Agent, AgentOptions
    from venice_terminal_agent.core.toolbox import FunctionToolbox
    from venice_terminal_agent.model import RetryPolicy, VeniceClient
    from venice_terminal_agent.model.models import ModelFacts
    from venice_terminal_agent.model.private import E2EE
    from venice_terminal_agent.testing import MockVenice

    async def no_wait(_: float) -> None:
        return None

    replies = [{"text": "Poseidonis."}, {"status": 503}, {"text": "It sank."}]
    async with MockVenice(script(replies=replies)) as fake:
        policy = RetryPolicy(sleep=no_wait, jitter=lambda: 0.5)
        async with VeniceClient("k", fake.base_url, retry=policy, http_client=fake.http_client()) as client:
            tools = FunctionToolbox({"echo": lambda text: text})
            agent = Agent(
                client,
                tools,
                AgentOptions(model="e2ee-fake", facts=ModelFacts(e2ee=True), private=E2EE("e2ee-fake")),
            )
            first = await agent.ask(QUESTION)
            second = await agent.ask("And what became of it?")
    assert (first.answer, second.answer) == ("Poseidonis.", "It sank.")
    chats = [seen for seen in fake.requests if seen.path.endswith("/chat/completions")]
    assert len(chats) == 3
    assert chats[1].body == chats[2].body  # the retry: the same sealed messages
    assert [len(chat.body["messages"]) for chat in chats] == [2, 4, 4]
    assert all("tools" not in chat.body for chat in chats)
    no_plaintext_left([chat.body for chat in chats])
    opened = fake.tee.plaintexts
    assert opened[:2] == [agent.history[0]["content"], QUESTION]
    assert opened[2:6] == [agent.history[0]["content"], QUESTION, "Poseidonis.", "And what became of it?"]
    assert len([seen for seen in fake.requests if seen.path.endswith("/tee/attestation")]) == 1


async def test_after_a_reply_that_does_not_decrypt_the_conversation_goes_on_encrypted() -> None:
    """In a REPL: the failed question is rolled back and said so on its receipt; the next one
    is answered, sealed for the same attested key, and its receipt says it was encrypted."""
    from venice_terminal_agent.agent import Agent, AgentOptions
    from venice_terminal_agent.core.toolbox import FunctionToolbox
    from venice_terminal_agent.model import VeniceClient
    from venice_terminal_agent.model.models import ModelFacts
    from venice_terminal_agent.model.private import E2EE
    from venice_terminal_agent.testing import MockVenice

    replies = [{"text": "Atlantis sank long ago."}, {"text": "Poseidonis."}]
    async with MockVenice(script(tee={"fault": "tampered", "on": [1]}, replies=replies)) as fake:
        async with VeniceClient("k", fake.base_url, http_client=fake.http_client()) as client:
            agent = Agent(
                client,
                FunctionToolbox({}),
                AgentOptions(model="e2ee-fake", facts=ModelFacts(e2ee=True), private=E2EE("e2ee-fake")),
            )
            failed = await agent.ask(QUESTION)
            answered = await agent.ask(QUESTION)
    assert failed.stopped_because is Exit.PRIVATE_FAILED and failed.e2ee is not None
    assert failed.e2ee["encrypted"] is False and "does not decrypt" in failed.e2ee["failed"]
    assert answered.stopped_because is Exit.ANSWERED and answered.answer == "Poseidonis."
    assert answered.e2ee is not None and answered.e2ee["encrypted"] is True
    assert answered.e2ee["request_ids"] == ["chatcmpl-fake-2"]
    assert [m["role"] for m in agent.history] == [
        "system",
        "user",
        "assistant",
    ]  # the failed one left no trace


GOOD_CHECKS = {"nonceBinding": {"bound": True}, "tdx": {"valid": True}}


@pytest.mark.parametrize(
    "replaced",
    [
        {"server_verification": {**GOOD_CHECKS, "nonceBinding": "bound"}},
        {"server_verification": {**GOOD_CHECKS, "nonceBinding": [True]}},
        {"server_verification": {**GOOD_CHECKS, "tdx": [{"valid": True}]}},
        {"server_verification": {**GOOD_CHECKS, "tdx": "valid"}},
        {"server_verification": {"nonceBinding": {"bound": True}, "nvidia": 1}},
        {"server_verification": {**GOOD_CHECKS, "nvidia": "valid"}, "nvidia_payload": "x"},
        {"server_verification": ["nonceBinding"]},
        {"server_verification": "verified"},
        {"verified": "true"},
        {"nonce": 12},
        {"nonce": None},  # none at all, the rest passing: no proof the evidence is of now
        {"model": {"id": "e2ee-fake"}},
        {"signing_key": 12},
        {"signing_key": ["04"]},
        {"signing_key": "zz"},
        {"signing_key": None, "signing_public_key": {"hex": "04"}},
        {"intel_quote": 7},
        {"intel_quote": ["00"]},
        {"intel_quote": "0xzz"},
        {"intel_quote": None},
    ],
    ids=lambda replaced: json.dumps(replaced)[:60],
)
def test_an_attestation_of_the_wrong_shape_ends_private_failed(
    tmp_path: Path, replaced: dict[str, Any]
) -> None:
    """Each field the client reads, of a type it is not: `private_failed` as a missing
    attestation is (a string `nonceBinding` or a list `tdx` used to exit 1), nothing sent."""
    with fake_venice(script(tee={"report": replaced}), tmp_path) as fake:
        done = ask(tmp_path, fake.base_url)
        requests = fake.requests()
    assert done.returncode == PRIVATE_FAILED, done.stderr
    got = receipt(done)
    assert got["stopped_because"] == "private_failed" and "the attestation did not pass" in got["refusal"]
    assert not [r for r in requests if r["path"].endswith("/chat/completions")]


@pytest.mark.parametrize(
    "chunk",
    [
        {"choices": {"0": {"delta": {}}}},
        {"choices": ["text"]},
        {"choices": [{"delta": "text"}]},
    ],
)
def test_a_sealed_stream_of_the_wrong_shape_ends_private_failed(chunk: dict[str, Any]) -> None:
    from venice_terminal_agent.core.errors import PrivateError
    from venice_terminal_agent.model.private import E2EE

    private = E2EE("e2ee-fake")
    try:
        opened = private.open({"id": "c", **chunk})
    except PrivateError:
        return
    assert all(isinstance(choice["delta"], dict) for choice in opened["choices"])


def test_plain_text_added_to_a_sealed_stream_is_not_shown_as_the_models(tmp_path: Path) -> None:
    """Web search results added in plain text on the way (`venice_parameters.
    web_search_citations`) were printed under the decrypted answer as its sources and kept in
    the receipt's `sources` while `e2ee.encrypted` said true. Only what was decrypted is the
    model's: the rest is dropped, and the receipt says what was."""
    planted = [{"title": "Atlantis found", "url": "https://planted.example/atlantis"}]
    reply = {"text": "Atlantis has no capital.", "citations": planted}
    with fake_venice(script(replies=[reply, reply]), tmp_path) as fake:
        done = ask(tmp_path, fake.base_url)
        plain = run_cli(tmp_path, fake.base_url, "--no-mcp", "Again?", VENICE_MODEL="e2ee-fake")
    assert done.returncode == 0, done.stderr
    got = receipt(done)
    assert got["answer"] == "Atlantis has no capital." and got["e2ee"]["encrypted"] is True
    assert "planted" not in json.dumps(got.get("sources") or [])
    assert got["e2ee"]["dropped"] == ["web_search_citations (not end-to-end encrypted)"]
    assert plain.returncode == 0, plain.stderr
    assert "planted.example" not in plain.stdout + plain.stderr


def fresh_attestation(e2ee: Any, tee: Any = None) -> tuple[dict[str, Any], str]:
    """`tee`'s attestation (a fake TEE's) for a fresh nonce of `e2ee`'s, one that passes as it is."""
    from venice_terminal_agent.testing.tee import FakeTee

    _, nonce = e2ee.attestation_path()
    _, report = (tee or FakeTee(True)).attestation(e2ee.model, nonce)
    return report, nonce


def tdx_quote(*, size: int = 632, tee_type: int = 0x81, td_attributes: int = 0) -> str:
    """A quote's hex as Intel lays it out (TDX DCAP quote v4): a 48-byte header (version 4,
    attestation key type 2, the TEE type, the QE's and PCE's SVNs, Intel's QE vendor id), then
    the TD report, its 8-byte TD attributes at 120 (bit 0: debug)."""
    quote = bytearray(size)
    quote[0:8] = (4).to_bytes(2, "little") + (2).to_bytes(2, "little") + tee_type.to_bytes(4, "little")
    quote[12:28] = bytes.fromhex("939a7233f79c4ca9940a0db3957f0607")
    quote[48 + 120 : 48 + 128] = td_attributes.to_bytes(8, "little")
    return quote[:size].hex()


SEPT_VE_DISABLE = 1 << 28  # a TD attribute production enclaves set; not debug


def test_a_tdx_quote_of_a_production_enclave_passes() -> None:
    from venice_terminal_agent.model.private import E2EE

    e2ee = E2EE("e2ee-fake")
    report, nonce = fresh_attestation(e2ee)
    report["intel_quote"] = tdx_quote(td_attributes=SEPT_VE_DISABLE)
    e2ee.accept(json.dumps(report).encode(), report, nonce)
    assert e2ee.attested
    assert "the TDX quote is a TDX quote and not in debug mode" in e2ee.report()["verified"]["checked_by_us"]


@pytest.mark.parametrize(
    ("quote", "why"),
    [
        ("0xzz", "its TDX quote is not hex"),
        (tdx_quote(size=631), "its TDX quote is too short to be one"),
        (tdx_quote(tee_type=0), "its quote is not a TDX quote"),  # an SGX quote
        (tdx_quote(td_attributes=SEPT_VE_DISABLE | 1), "the enclave runs in debug mode (no confidentiality)"),
        (
            tdx_quote(tee_type=0, td_attributes=1),
            "its quote is not a TDX quote; the enclave runs in debug mode (no confidentiality)",
        ),
    ],
    ids=["not hex", "short", "SGX", "debug", "SGX and debug"],
)
def test_a_tdx_quote_that_does_not_pass_is_refused_saying_why(quote: str, why: str) -> None:
    """README (Private models): the client checks itself that the quote is TDX and not of a
    debug enclave, whose memory its host can read; the refusal, on the receipt, says which."""
    from venice_terminal_agent.model.private import E2EE, PrivateError

    e2ee = E2EE("e2ee-fake")
    report, nonce = fresh_attestation(e2ee)
    report["intel_quote"] = quote
    with pytest.raises(PrivateError) as refused:
        e2ee.accept(json.dumps(report).encode(), report, nonce)
    assert str(refused.value) == (
        f"e2ee-fake is end-to-end encrypted and the attestation did not pass: {why}; "
        "nothing was sent in plaintext"
    )
    assert not e2ee.attested and e2ee.report()["failed"] == f"the attestation did not pass: {why}"


NVIDIA_CHECKED = {"nonceBinding": {"bound": True}, "tdx": {"valid": True}, "nvidia": {"valid": True}}


@pytest.mark.parametrize(
    ("changed", "why"),
    [
        ({"verified": False}, "Venice does not say it is verified"),
        ({"nonce": None}, "it does not echo our fresh nonce (a replayed attestation?)"),
        ({"nonce": "ab" * 32}, "it does not echo our fresh nonce (a replayed attestation?)"),
        ({"model": "e2ee-other"}, "it attests 'e2ee-other', not 'e2ee-fake'"),
        ({"signing_key": None}, "its signing key is missing or not a secp256k1 public key"),
        ({"signing_key": "02" + "11" * 32}, "its signing key is missing or not a secp256k1 public key"),
        ({"server_verification": None}, "it carries no server_verification"),
        (
            {"server_verification": {**GOOD_CHECKS, "nonceBinding": {"bound": False}}},
            "the nonce is not bound to the evidence",
        ),
        (
            {"server_verification": {**NVIDIA_CHECKED, "tdx": {"valid": False}}},
            "the Intel TDX evidence did not pass",
        ),
        (
            {
                "server_verification": {**NVIDIA_CHECKED, "nvidia": {"valid": "true"}},
                "nvidia_payload": "eyJ9",
            },
            "the NVIDIA GPU evidence did not pass",
        ),
        (
            {"server_verification": {"nonceBinding": {"bound": True}}},
            "the Intel TDX evidence did not pass; no hardware evidence was checked",
        ),
        (  # the GPU's evidence checked does not stand for the quote's
            {"server_verification": {"nonceBinding": {"bound": True}, "nvidia": {"valid": True}}},
            "the Intel TDX evidence did not pass",
        ),
        ({"intel_quote": None}, "it carries no Intel TDX quote"),
        ({"intel_quote": ""}, "it carries no Intel TDX quote"),
        (
            {"verified": False, "nonce": None, "intel_quote": None},
            "Venice does not say it is verified; it does not echo our fresh nonce (a replayed "
            "attestation?); it carries no Intel TDX quote",
        ),
    ],
    ids=lambda value: json.dumps(value)[:50] if isinstance(value, dict) else None,
)
def test_an_attestation_that_does_not_pass_is_refused_saying_why(changed: dict[str, Any], why: str) -> None:
    """README (Private models): an attestation without our nonce, with another's, of another
    model, with no valid key, or whose evidence Venice does not report checked is refused,
    and the refusal (the receipt's `e2ee.failed`) says every reason; nothing is sealed for it."""
    from venice_terminal_agent.model.private import E2EE, PrivateError

    e2ee = E2EE("e2ee-fake")
    report, nonce = fresh_attestation(e2ee)
    report = {name: value for name, value in {**report, **changed}.items() if value is not None}
    with pytest.raises(PrivateError) as refused:
        e2ee.accept(json.dumps(report).encode(), report, nonce)
    assert str(refused.value) == (
        f"e2ee-fake is end-to-end encrypted and the attestation did not pass: {why}; "
        "nothing was sent in plaintext"
    )
    assert not e2ee.attested and e2ee.report()["encrypted"] is False


def test_an_attestation_that_is_not_an_object_is_refused_saying_so() -> None:
    from venice_terminal_agent.model.private import E2EE, PrivateError

    e2ee = E2EE("e2ee-fake")
    with pytest.raises(
        PrivateError, match="and the attestation did not pass: the answer is not a JSON object;"
    ):
        e2ee.accept(b"[]", [], e2ee.attestation_path()[1])


@pytest.mark.parametrize(
    ("checks", "payload", "reported"),
    [
        (GOOD_CHECKS, None, ["tdx"]),
        (NVIDIA_CHECKED, "eyJ9", ["nvidia", "tdx"]),
        ({**GOOD_CHECKS, "nvidia": {"valid": False}}, None, ["tdx"]),  # no GPU evidence was sent
    ],
)
def test_the_receipt_says_what_was_attested_and_what_venice_reports_it_checked(
    checks: dict[str, Any], payload: str | None, reported: list[str]
) -> None:
    """README (Private models, What is verified): `verified` holds the attestation's digest, our
    nonce, the model, the signing key's digest and address, what this client checked itself,
    and `reported_by_venice` the hardware evidence Venice says it checked."""
    import hashlib

    from venice_terminal_agent.model.private import E2EE, NOT_VERIFIED
    from venice_terminal_agent.testing.tee import FakeTee

    e2ee, tee = E2EE("e2ee-fake"), FakeTee(True)
    report, nonce = fresh_attestation(e2ee, tee)
    report["server_verification"] = checks
    if payload:
        report["nvidia_payload"] = payload
    raw = json.dumps(report).encode()
    e2ee.accept(raw, report, nonce)
    said = e2ee.report()  # before any question: attested, nothing failed, asked or dropped
    assert (
        sorted(said) == ["encrypted", "not_verified_by_us", "off", "verified"] and said["encrypted"] is True
    )
    assert said["not_verified_by_us"] == list(NOT_VERIFIED)
    assert said["off"] == "tools, web search and attachments (Venice does not allow them with E2EE)"
    verified = said["verified"]
    assert {name: value for name, value in verified.items() if name != "checked_by_us"} == {
        "attestation_sha256": hashlib.sha256(raw).hexdigest(),
        "nonce": nonce,
        "model": "e2ee-fake",
        "signing_key_sha256": hashlib.sha256(bytes.fromhex(tee.public_hex)).hexdigest(),
        "signing_address": report["signing_address"],
        "tee_provider": "fake-tdx",
        "reported_by_venice": reported,
    }
    assert verified["checked_by_us"] == [
        "a fresh 32-byte nonce of ours, echoed back (Venice reports it bound to the evidence)",
        "the attested model is the one asked",
        "the signing key is a valid secp256k1 key, and every message was sealed for it",
        "the TDX quote is a TDX quote and not in debug mode",
        "every piece of the answer was encrypted to this session's key and decrypted (AES-GCM)",
    ]


def answer_piece(content: str) -> dict[str, Any]:
    return {"id": "chat-1", "choices": [{"index": 0, "delta": {"role": "assistant", "content": content}}]}


@pytest.mark.parametrize(
    ("piece", "why"),
    [
        ("Hi", "it is not encrypted (not hex)"),  # plain text of an even length
        ("abc", "it is not encrypted (not hex)"),  # hex, but not whole bytes
        ("00" * 92, "it is too short to be encrypted"),  # a byte short of a sealed empty text
        ("00" * 69, "it is too short to be encrypted"),
        # Long enough, but its first 65 bytes, the sender's key, are no key at all.
        ("00" * 93, "it is not an uncompressed secp256k1 public key"),
        ("02" + "00" * 92, "it is not an uncompressed secp256k1 public key"),
    ],
)
def test_a_piece_of_the_answer_that_is_not_sealed_is_refused_saying_why(piece: str, why: str) -> None:
    from venice_terminal_agent.model.private import E2EE, PrivateError

    e2ee = E2EE("e2ee-fake")
    with pytest.raises(PrivateError) as refused:
        e2ee.open(answer_piece(piece))
    assert str(refused.value) == (
        f"e2ee-fake is end-to-end encrypted and a piece of the answer was refused: {why}; "
        "nothing was sent in plaintext"
    )


def test_a_piece_sealed_for_us_opens_even_empty_and_one_sealed_for_another_does_not() -> None:
    from venice_terminal_agent.model.private import E2EE, PrivateError
    from venice_terminal_agent.testing.tee import seal

    e2ee, other = E2EE("e2ee-fake"), E2EE("e2ee-fake")
    ours = e2ee.headers()["X-Venice-TEE-Client-Pub-Key"]
    assert len(seal("", ours)) == 2 * 93  # key, nonce and tag: the shortest a sealed piece can be
    for text in ("", "Poseidonis."):
        assert e2ee.open(answer_piece(seal(text, ours)))["choices"][0]["delta"]["content"] == text
    # A stream's first piece often carries the role and an empty content, unsealed: nothing to open.
    assert e2ee.open(answer_piece(""))["choices"][0]["delta"] == {"role": "assistant"}
    with pytest.raises(PrivateError) as refused:
        other.open(answer_piece(seal("Poseidonis.", ours)))
    assert str(refused.value) == (
        "e2ee-fake is end-to-end encrypted and a piece of the answer was refused: it does not decrypt "
        "with this session's key (wrong key, or changed on the way); nothing was sent in plaintext"
    )


@pytest.mark.parametrize(
    ("message", "role"),
    [
        ({"role": "assistant", "content": "", "tool_calls": [{"id": "1"}]}, "assistant"),
        ({"role": "tool", "content": "a result", "tool_call_id": "1"}, "tool"),
        ({"role": "user", "content": [{"type": "text", "text": "parts"}]}, "user"),
    ],
    ids=["tool calls", "a tool result", "parts"],
)
def test_a_message_that_cannot_be_sealed_is_refused_never_sent_as_it_is(message: dict, role: str) -> None:
    from venice_terminal_agent.model.private import E2EE, PrivateError

    e2ee = E2EE("e2ee-fake")
    report, nonce = fresh_attestation(e2ee)
    e2ee.accept(json.dumps(report).encode(), report, nonce)
    (sealed,) = e2ee.seal([{"role": "user", "content": "fine", "name": "ada", "reasoning_content": "x"}])
    assert sorted(sealed) == ["content", "name", "role"] and sealed["content"] != "fine"
    assert (sealed["role"], sealed["name"]) == ("user", "ada")  # who speaks goes as it is
    with pytest.raises(PrivateError, match=f"and a {role} message cannot be encrypted \\(only text can\\);"):
        e2ee.seal([{"role": "user", "content": "fine"}, message])


@pytest.mark.parametrize(
    ("chunk", "why"),
    [
        ({"id": "c", "choices": "sealed"}, "a piece of the answer is not a list of choices"),
        ({"id": "c", "choices": ["sealed"]}, "a piece of the answer is not a list of choices"),
        (
            {
                "id": "c",
                "choices": [{"index": 0, "delta": {"tool_calls": [{"id": "1", "function": {"name": "f"}}]}}],
            },
            "the answer carried tool calls, which E2EE does not allow",
        ),
    ],
    ids=["choices not a list", "a choice not an object", "tool calls"],
)
def test_a_piece_of_the_answer_of_the_wrong_shape_is_refused_saying_why(chunk: dict, why: str) -> None:
    from venice_terminal_agent.model.private import E2EE, PrivateError

    with pytest.raises(PrivateError) as refused:
        E2EE("e2ee-fake").open(chunk)
    assert str(refused.value) == f"e2ee-fake is end-to-end encrypted and {why}; nothing was sent in plaintext"


def test_a_sealed_piece_keeps_the_streams_own_fields_and_names_what_came_in_plain_text() -> None:
    """README, Reliability: a sealed chunk keeps the stream's own fields and the decrypted text;
    anything added in plain text on the way is not the model's, and the receipt names it."""
    from venice_terminal_agent.model.private import E2EE
    from venice_terminal_agent.testing.tee import seal

    e2ee = E2EE("e2ee-fake")
    ours = e2ee.headers()["X-Venice-TEE-Client-Pub-Key"]
    delta = {
        "role": "assistant",
        "content": seal("Poseidonis.", ours),
        "note": "plain",
        "empty": "",
        "none": None,
    }
    opened = e2ee.open({"id": "c", "choices": [{"index": 1, "finish_reason": "stop", "delta": delta}]})
    assert opened == {
        "id": "c",
        "choices": [
            {"index": 1, "finish_reason": "stop", "delta": {"role": "assistant", "content": "Poseidonis."}}
        ],
    }
    assert e2ee.report()["dropped"] == ["note (not end-to-end encrypted)"]


@pytest.mark.parametrize("shown", ["bare", "0x", "signing_public_key"])
def test_an_attested_key_as_venice_may_give_it_is_the_key_messages_are_sealed_for(shown: str) -> None:
    """A secp256k1 public key may come as its 64 bytes of x and y, without the leading 04,
    `0x` before them, and under the report's other name for it, `signing_public_key`: the
    enclave opens what is sealed for it."""
    from venice_terminal_agent.model.private import E2EE
    from venice_terminal_agent.testing.tee import FakeTee

    e2ee, tee = E2EE("e2ee-fake"), FakeTee(True)
    report, nonce = fresh_attestation(e2ee, tee)
    full = report["signing_key"]
    assert len(full) == 130 and full.startswith("04")
    if shown == "signing_public_key":
        report["signing_public_key"] = report.pop("signing_key")
    else:
        report["signing_key"] = ("0x" if shown == "0x" else "") + full[2:]
    e2ee.accept(json.dumps(report).encode(), report, nonce)
    assert tee.open_messages(e2ee.seal([{"role": "user", "content": QUESTION}])) is None
    assert tee.plaintexts == [QUESTION]


async def test_the_encryption_goes_with_each_request_not_onto_the_shared_client() -> None:
    """Two conversations on one client, one encrypted and one not: each request is sent as its
    own conversation says (the agent hands its E2EE to the planner, which hands it to the client
    with each request), and /compact's summary request of the encrypted one goes sealed too."""
    from venice_terminal_agent.agent import Agent, AgentOptions
    from venice_terminal_agent.core.toolbox import FunctionToolbox
    from venice_terminal_agent.model import VeniceClient
    from venice_terminal_agent.model.models import ModelFacts
    from venice_terminal_agent.model.private import E2EE
    from venice_terminal_agent.testing import MockVenice

    texts = ["One.", "Two.", "Three.", "In plain.", "The summary."]
    async with MockVenice(script(replies=[{"text": text} for text in texts])) as fake:
        async with VeniceClient("k", fake.base_url, http_client=fake.http_client()) as client:
            facts = ModelFacts(e2ee=True)
            sealed = Agent(
                client,
                FunctionToolbox({}),
                AgentOptions(model="e2ee-fake", facts=facts, private=E2EE("e2ee-fake")),
            )
            plain = Agent(client, FunctionToolbox({}), AgentOptions(model="e2ee-fake", facts=facts))
            for question in ("Atlantis, first?", "Atlantis, second?", "Atlantis, third?"):
                assert (await sealed.ask(question)).e2ee["encrypted"] is True
            in_plain = await plain.ask("Where is Lemuria?")
            said = await sealed.compact()
    assert in_plain.answer == "In plain." and in_plain.e2ee is None
    assert said.startswith("compacted 1 earlier round")
    chats = [seen.body for seen in fake.requests if seen.path.endswith("/chat/completions")]
    assert len(chats) == 5
    assert "Where is Lemuria?" in json.dumps(chats[3])  # the plain conversation's, as it is
    assert "enable_e2ee" not in chats[3]["venice_parameters"]
    no_plaintext_left([chats[index] for index in (0, 1, 2, 4)])
    assert chats[4]["venice_parameters"]["enable_e2ee"] is True
    assert any("conversation below is getting too long" in text for text in fake.tee.plaintexts)
