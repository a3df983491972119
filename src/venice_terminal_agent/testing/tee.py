"""The fake server's TEE: Venice's E2EE protocol with real cryptography, and its faults.

Written from the protocol, not from the client's code (`model/private.py`), so a mistake the
client makes is not made here too: secp256k1 keys, ECDH, HKDF-SHA256 (no salt, info
`ecdsa_encryption`), AES-256-GCM with a 12-byte nonce, hex(ephemeral key 65 ‖ nonce ‖ sealed).

- `GET /tee/attestation?model=M&nonce=N` answers a report that passes a careful client's
  checks: `verified`, N echoed, M, the enclave's `signing_key`, a TDX quote (type 0x81, not
  debug) and `server_verification` (nonce bound, TDX valid).
- A chat request with `X-Venice-TEE-Client-Pub-Key` must have every message's content sealed
  for the enclave's key (else 400, as nothing could be read); `plaintexts` keeps what it
  opened. Each text piece of the reply is sealed for the client's key.

Script key `tee`: `true`, or `{"fault": F}` with F one of
  unverified    the report says `verified: false`
  stale_nonce   the report echoes another nonce (a replayed attestation)
  replayed      every report after the first is the first one again, its nonce included
  debug         the TDX quote says the enclave runs in debug mode
  missing       no attestation: 404
  wrong_key     the reply's pieces are sealed for another key than the client's
  tampered      one byte of the reply's second piece is changed after sealing
  plaintext     the reply's second piece is sent as plain text
and `"on": [N, …]` to have a reply fault only on those replies (numbered from 1; default all),
`"report": {field: value}` to have those fields of the attestation replaced (a hostile one:
`{"server_verification": {"nonceBinding": "yes"}}`; a field given as null is left out).
"""

from __future__ import annotations

import os
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

FAULTS = {
    "unverified", "stale_nonce", "replayed", "debug", "missing", "wrong_key", "tampered", "plaintext",
}  # fmt: skip
QUOTE_BYTES = 632


def _raw(key: ec.EllipticCurvePublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


def _key(private: ec.EllipticCurvePrivateKey, public: ec.EllipticCurvePublicKey) -> bytes:
    secret = private.exchange(ec.ECDH(), public)
    return HKDF(hashes.SHA256(), 32, None, b"ecdsa_encryption").derive(secret)


def seal(text: str, recipient_hex: str) -> str:
    recipient = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256K1(), bytes.fromhex(recipient_hex))
    ephemeral = ec.generate_private_key(ec.SECP256K1())
    nonce = os.urandom(12)
    body = AESGCM(_key(ephemeral, recipient)).encrypt(nonce, text.encode(), None)
    return (_raw(ephemeral.public_key()) + nonce + body).hex()


class FakeTee:
    def __init__(self, config: Any) -> None:
        self.fault = config.get("fault") if isinstance(config, dict) else None
        self.on = config.get("on") if isinstance(config, dict) else None
        self.replaced = config.get("report") or {} if isinstance(config, dict) else {}
        if self.fault is not None and self.fault not in FAULTS:
            raise ValueError(f"tee fault {self.fault!r} is not one of {sorted(FAULTS)}")
        self.enclave = ec.generate_private_key(ec.SECP256K1())
        self.plaintexts: list[str] = []  # every message content it opened, in order
        self.first: dict[str, Any] | None = None  # the first report, for `replayed`

    @property
    def public_hex(self) -> str:
        return _raw(self.enclave.public_key()).hex()

    def attestation(self, model: str, nonce: str) -> tuple[int, Any]:
        if self.fault == "missing":
            return 404, {"error": "no attestation for this model"}
        quote = bytearray(QUOTE_BYTES)
        quote[0:2] = (4).to_bytes(2, "little")  # version
        quote[4:8] = (0x81).to_bytes(4, "little")  # TEE type: TDX
        if self.fault == "debug":
            quote[48 + 120] = 1  # tdAttributes bit 0: debug
        if self.fault == "replayed" and self.first is not None:
            return 200, self.first
        report = {
            "verified": self.fault != "unverified",
            "nonce": os.urandom(32).hex() if self.fault == "stale_nonce" else nonce,
            "model": model,
            "tee_provider": "fake-tdx",
            "signing_key": self.public_hex,
            "signing_address": "0x" + os.urandom(20).hex(),
            "intel_quote": quote.hex(),
            "server_verification": {"nonceBinding": {"bound": True}, "tdx": {"valid": True}},
        }
        report.update(self.replaced)
        report = {name: value for name, value in report.items() if value is not None}
        self.first = self.first or report
        return 200, report

    def open_messages(self, messages: list[Any]) -> str | None:
        """Open every message (kept in `plaintexts`); why one cannot be opened, or None."""
        for number, message in enumerate(messages, start=1):
            content = message.get("content") if isinstance(message, dict) else None
            try:
                raw = bytes.fromhex(content) if isinstance(content, str) else b""
                sender = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256K1(), raw[:65])
                text = AESGCM(_key(self.enclave, sender)).decrypt(raw[65:77], raw[77:], None).decode()
            except Exception:  # any failure means the enclave could not read it
                return f"E2EE: message {number} is not encrypted for this enclave's key"
            self.plaintexts.append(text)
        return None

    def seal_reply(self, parts: list[dict[str, Any]], client_hex: str, number: int) -> list[dict[str, Any]]:
        """Reply `number`'s chunks with every text piece sealed for the client (and the fault)."""
        recipient = client_hex
        fault = self.fault if self.on is None or number in self.on else None
        if fault == "wrong_key":
            recipient = _raw(ec.generate_private_key(ec.SECP256K1()).public_key()).hex()
        pieces = 0
        out = []
        for part in parts:
            choices = []
            for choice in part.get("choices") or ():
                delta = dict(choice.get("delta") or {})
                for field in ("content", "reasoning_content"):
                    text = delta.get(field)
                    if not isinstance(text, str) or not text:
                        continue
                    pieces += 1
                    sealed = seal(text, recipient)
                    if pieces == 2 and fault == "tampered":
                        sealed = sealed[:-2] + f"{int(sealed[-2:], 16) ^ 1:02x}"
                    delta[field] = text if pieces == 2 and fault == "plaintext" else sealed
                choices.append({**choice, "delta": delta})
            out.append({**part, "choices": choices})
        return out
