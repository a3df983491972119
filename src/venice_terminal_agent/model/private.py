"""End-to-end encrypted (E2EE) chat with Venice's TEE models: private, or not at all.

The protocol (Venice's, as its own CLI speaks it; see docs/models.md, "Private models (E2EE)"):

1. `GET /tee/attestation?model=M&nonce=N`, N 32 fresh random bytes (hex). The answer must say
   `verified: true`, echo N, name M, carry the enclave's secp256k1 `signing_key`, and its
   `server_verification` must say the nonce is bound and the hardware evidence valid.
2. This session makes its own secp256k1 key pair. Each chat request carries
   `X-Venice-TEE-Client-Pub-Key` (ours), `X-Venice-TEE-Model-Pub-Key` (the attested key) and
   `X-Venice-TEE-Signing-Algo: ecdsa`.
3. Every message's content goes out encrypted: a fresh ephemeral key, ECDH with the attested
   key, HKDF-SHA256 (no salt, info `ecdsa_encryption`) to an AES-256-GCM key, a 12-byte
   nonce; sent as hex(ephemeral public key 65 ‖ nonce 12 ‖ ciphertext and tag).
4. Every text piece of the answer comes back in that form, encrypted to our key: it is
   decrypted (GCM checks it was not changed) before anything is shown.

It fails closed: an attestation that cannot be fetched or does not pass, a piece that does
not decrypt, or a piece that is not encrypted at all raises `PrivateError` (the question ends
`private_failed`); nothing is ever sent or shown in plaintext instead. `cryptography` is
imported by this module only, and this module only when a model is used encrypted.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ..core.errors import PrivateError

HKDF_INFO = b"ecdsa_encryption"
PUBLIC_KEY_BYTES = 65  # an uncompressed secp256k1 point: 04 ‖ x ‖ y
NONCE_BYTES = 12
TAG_BYTES = 16
SEALED = re.compile(r"\A[0-9a-fA-F]+\Z")
TEXT_FIELDS = ("content", "reasoning_content")  # the answer's text, and its thinking
# A sealed stream chunk's fields that are the stream's own, not the model's words: kept as sent.
PLAIN_CHUNK_FIELDS = ("id", "object", "created", "model", "system_fingerprint", "usage", "cost", "choices")
TDX_TEE_TYPE = (0x81).to_bytes(4, "little")  # the quote header's 4-byte TEE type field: TDX
TDX_BODY = 48  # where the TD report starts in a TDX quote
TDX_MIN_BYTES = 632

# Said on every receipt of an encrypted question: what this client did not check itself.
NOT_VERIFIED = (
    "the TDX quote's signature and Intel's certificate chain (Venice's server_verification says it checked them)",
    "the NVIDIA GPU evidence (Venice's server_verification only)",
    "which code runs in the enclave: no MRTD or RTMR measurement is pinned",
    "that the signing key is the one in the quote's report data (that needs Keccak-256)",
    "the response signature (GET /tee/signature with the request ids below is not fetched)",
)


def _encrypt(plaintext: str, recipient: ec.EllipticCurvePublicKey) -> str:
    """`plaintext` sealed for `recipient`: hex(ephemeral public key ‖ nonce ‖ ciphertext+tag)."""
    ephemeral = ec.generate_private_key(ec.SECP256K1())
    key = _aes_key(ephemeral, recipient)
    nonce = os.urandom(NONCE_BYTES)
    sealed = AESGCM(key).encrypt(nonce, plaintext.encode("utf-8"), None)
    return (_point(ephemeral.public_key()) + nonce + sealed).hex()


def _decrypt(sealed_hex: str, own: ec.EllipticCurvePrivateKey) -> str:
    """The text in `sealed_hex`, sealed for `own`'s public key; `ValueError` when it is not
    (not hex, too short, not a point, wrong key, changed on the way: GCM's tag)."""
    if not SEALED.match(sealed_hex) or len(sealed_hex) % 2:
        raise ValueError("it is not encrypted (not hex)")
    raw = bytes.fromhex(sealed_hex)
    if len(raw) < PUBLIC_KEY_BYTES + NONCE_BYTES + TAG_BYTES:
        raise ValueError("it is too short to be encrypted")
    sender = _public_key(raw[:PUBLIC_KEY_BYTES])
    nonce = raw[PUBLIC_KEY_BYTES : PUBLIC_KEY_BYTES + NONCE_BYTES]
    try:
        plain = AESGCM(_aes_key(own, sender)).decrypt(nonce, raw[PUBLIC_KEY_BYTES + NONCE_BYTES :], None)
    except InvalidTag:
        raise ValueError(
            "it does not decrypt with this session's key (wrong key, or changed on the way)"
        ) from None
    return plain.decode("utf-8")


def _aes_key(own: ec.EllipticCurvePrivateKey, peer: ec.EllipticCurvePublicKey) -> bytes:
    shared = own.exchange(ec.ECDH(), peer)  # the x coordinate, 32 bytes, as elliptic's derive()
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=HKDF_INFO).derive(shared)


def _point(key: ec.EllipticCurvePublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


def _public_key(raw: bytes) -> ec.EllipticCurvePublicKey:
    """A secp256k1 point from 65 bytes (or 64, without the 04); `ValueError` if it is none."""
    if len(raw) == PUBLIC_KEY_BYTES - 1:
        raw = b"\x04" + raw
    if len(raw) != PUBLIC_KEY_BYTES or raw[0] != 4:
        raise ValueError("it is not an uncompressed secp256k1 public key")
    return ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256K1(), raw)


def _hex_bytes(text: object) -> bytes:
    if not isinstance(text, str):
        raise ValueError("missing")
    return bytes.fromhex(text[2:] if text.startswith("0x") else text)


class E2EE:
    """One session's encryption with one model: attest once, then seal and open messages.

    `report()` is what the receipt carries: what was verified, and what was not by us."""

    def __init__(self, model: str) -> None:
        self.model = model
        self._own = ec.generate_private_key(ec.SECP256K1())
        self._enclave: ec.EllipticCurvePublicKey | None = None
        self._enclave_hex = ""
        self.verified: dict[str, Any] = {}
        self.request_ids: list[str] = []
        self.failure: str | None = None
        self.dropped: list[str] = []  # what came in plain text beside the sealed answer, not shown

    def begin(self) -> None:
        """A new question: its receipt says what became of it alone (the attestation stays)."""
        self.failure = None
        self.request_ids = []
        self.dropped = []

    @property
    def attested(self) -> bool:
        return self._enclave is not None

    # -- 1. attestation ---------------------------------------------------------------------
    def attestation_path(self) -> tuple[str, str]:
        """The path to ask, and the fresh nonce in it (a new one each time: never replayed)."""
        nonce = os.urandom(32).hex()
        return f"tee/attestation?model={quote(self.model, safe='')}&nonce={nonce}", nonce

    def accept(self, raw: bytes, report: object, nonce: str) -> None:
        """Check the attestation `report` (its body `raw`) for `nonce`; `PrivateError` unless
        every check passes, and then the enclave's key is the one messages are sealed for."""
        problems = _attestation_problems(report, self.model, nonce)
        if problems:
            raise self.fail("the attestation did not pass: " + "; ".join(problems))
        assert isinstance(report, dict)
        key_hex = report.get("signing_key") or report.get("signing_public_key")
        self._enclave = _public_key(_hex_bytes(key_hex))
        self._enclave_hex = str(key_hex)
        checks = _object(report.get("server_verification"))
        self.verified = {
            "attestation_sha256": hashlib.sha256(raw).hexdigest(),
            "nonce": nonce,
            "model": report.get("model"),
            "signing_key_sha256": hashlib.sha256(_point(self._enclave)).hexdigest(),
            "signing_address": report.get("signing_address"),
            "tee_provider": report.get("tee_provider"),
            "checked_by_us": [
                "a fresh 32-byte nonce of ours, echoed back (Venice reports it bound to the evidence)",
                "the attested model is the one asked",
                "the signing key is a valid secp256k1 key, and every message was sealed for it",
                "the TDX quote is a TDX quote and not in debug mode",  # none passes without one
                "every piece of the answer was encrypted to this session's key and decrypted (AES-GCM)",
            ],
            "reported_by_venice": sorted(
                name for name in ("tdx", "nvidia") if _object(checks.get(name)).get("valid") is True
            ),
        }

    def fail(self, reason: str) -> PrivateError:
        self.failure = reason
        return PrivateError(
            f"{self.model} is end-to-end encrypted and {reason}; nothing was sent in plaintext"
        )

    # -- 2-3. what goes out -----------------------------------------------------------------
    def headers(self) -> dict[str, str]:
        return {
            "X-Venice-TEE-Client-Pub-Key": _point(self._own.public_key()).hex(),
            "X-Venice-TEE-Model-Pub-Key": self._enclave_hex,
            "X-Venice-TEE-Signing-Algo": "ecdsa",
        }

    def seal(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Every message with its content encrypted; a message it cannot seal (parts, tool
        calls) is refused, never sent as it is."""
        assert self._enclave is not None, "attest first"
        sealed = []
        for message in messages:
            content = message.get("content")
            if not isinstance(content, str) or message.get("tool_calls") or message.get("role") == "tool":
                raise self.fail(f"a {message.get('role')} message cannot be encrypted (only text can)")
            kept = {k: v for k, v in message.items() if k in ("role", "content", "name")}
            sealed.append({**kept, "content": _encrypt(content, self._enclave)})
        return sealed

    # -- 4. what comes back -----------------------------------------------------------------
    def open(self, chunk: dict[str, Any]) -> dict[str, Any]:
        """`chunk` with its text decrypted; `PrivateError` for a piece that is not encrypted to
        us, or tool calls (none were offered)."""
        if isinstance(chunk.get("id"), str) and chunk["id"] not in self.request_ids:
            self.request_ids.append(chunk["id"])
        choices = []
        listed = chunk.get("choices") or []
        if not isinstance(listed, list) or not all(isinstance(choice, dict) for choice in listed):
            raise self.fail("a piece of the answer is not a list of choices")
        for choice in listed:
            given = _object(choice.get("delta"))
            if given.get("tool_calls"):
                raise self.fail("the answer carried tool calls, which E2EE does not allow")
            delta = {"role": given["role"]} if isinstance(given.get("role"), str) else {}
            for field in TEXT_FIELDS:
                piece = given.get(field)
                if isinstance(piece, str) and piece:
                    try:
                        delta[field] = _decrypt(piece, self._own)
                    except ValueError as error:
                        raise self.fail(f"a piece of the answer was refused: {error}") from None
            self._drop(name for name, value in given.items() if name not in delta and value not in (None, ""))
            kept = {name: choice[name] for name in ("index", "finish_reason") if name in choice}
            choices.append({**kept, "delta": delta})
        # Only what was decrypted is the model's: anything else added on the way in plain text
        # (Venice's web search citations, say) is not shown as its, nor kept.
        venice = _object(chunk.get("venice_parameters"))  # the request's settings, echoed
        self._drop(["web_search_citations"] if venice.get("web_search_citations") else [])
        self._drop(name for name in chunk if name not in (*PLAIN_CHUNK_FIELDS, "venice_parameters"))
        return {**{name: chunk[name] for name in PLAIN_CHUNK_FIELDS if name in chunk}, "choices": choices}

    def _drop(self, names: Iterable[str]) -> None:
        for name in names:
            line = f"{name} (not end-to-end encrypted)"
            if line not in self.dropped:
                self.dropped.append(line)

    def report(self) -> dict[str, Any]:
        """The receipt's `e2ee` object."""
        report: dict[str, Any] = {"encrypted": self.attested and self.failure is None}
        if self.verified:
            report["verified"] = self.verified
        if self.failure is not None:
            report["failed"] = self.failure
        report["not_verified_by_us"] = list(NOT_VERIFIED)
        if self.request_ids:
            report["request_ids"] = list(self.request_ids)
        if self.dropped:
            report["dropped"] = list(self.dropped)
        report["off"] = "tools, web search and attachments (Venice does not allow them with E2EE)"
        return report


def _attestation_problems(report: object, model: str, nonce: str) -> list[str]:
    """Every reason the attestation cannot be trusted (none: it passes our checks)."""
    if not isinstance(report, dict):
        return ["the answer is not a JSON object"]
    problems = []
    if report.get("verified") is not True:
        problems.append("Venice does not say it is verified")
    if report.get("nonce") != nonce:
        problems.append("it does not echo our fresh nonce (a replayed attestation?)")
    if report.get("model") != model:
        problems.append(f"it attests {report.get('model')!r}, not {model!r}")
    key_hex = report.get("signing_key") or report.get("signing_public_key")
    try:
        _public_key(_hex_bytes(key_hex))
    except ValueError:
        problems.append("its signing key is missing or not a secp256k1 public key")
    checks = report.get("server_verification")
    if not isinstance(checks, dict):
        problems.append("it carries no server_verification")
    else:
        # Each part is an object; of any other type it says nothing, and nothing is not a pass.
        if _object(checks.get("nonceBinding")).get("bound") is not True:
            problems.append("the nonce is not bound to the evidence")
        if report.get("intel_quote") and _object(checks.get("tdx")).get("valid") is not True:
            problems.append("the Intel TDX evidence did not pass")
        if report.get("nvidia_payload") and _object(checks.get("nvidia")).get("valid") is not True:
            problems.append("the NVIDIA GPU evidence did not pass")
        if not _object(checks.get("tdx")) and not _object(checks.get("nvidia")):
            problems.append("no hardware evidence was checked")
    if not report.get("intel_quote"):
        problems.append("it carries no Intel TDX quote")
    else:
        problems.extend(_quote_problems(report["intel_quote"]))
    return problems


def _object(value: object) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (a part of the wrong type says nothing)."""
    return value if isinstance(value, dict) else {}


def _quote_problems(quote_hex: object) -> list[str]:
    """What the TDX quote's header says against it: not TDX, or a debug enclave."""
    try:
        quote_bytes = _hex_bytes(quote_hex)
    except ValueError:
        return ["its TDX quote is not hex"]
    if len(quote_bytes) < TDX_MIN_BYTES:
        return ["its TDX quote is too short to be one"]
    problems = []
    if quote_bytes[4:8] != TDX_TEE_TYPE:
        problems.append("its quote is not a TDX quote")
    if quote_bytes[TDX_BODY + 120] & 1:
        problems.append("the enclave runs in debug mode (no confidentiality)")
    return problems
