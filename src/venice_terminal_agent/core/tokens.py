"""How many tokens something will take, estimated before it is sent (pure).

No tokenizer is loaded: each model has its own, and the agent must decide before a request
whether it fits. The estimate errs high: English prose runs about 4 characters a token, JSON
(tool schemas, arguments, results) about 3, so dividing by 3 over-counts prose and is about
right for schemas. The server's `prompt_tokens` says the truth after the request.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable

CHARS_PER_TOKEN = 3.0


def estimate_tokens(value: object) -> int:
    """At least about as many tokens as `value` takes: a str as is, anything else as the
    compact JSON it is sent as (tool schemas: `[spec.openai_function() for spec in specs]`)."""
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    )
    return math.ceil(len(text) / CHARS_PER_TOKEN)


# Images are not text: what a model makes of one depends on its size in pixels, not on the
# bytes of its data URL (a 1.2 MB screenshot is about 1.6 MB of base64, yet a model sees a
# thousand-odd tokens). Venice does not publish its models' rule, so the estimate is OpenAI's
# high-detail tile rule on the image's real size, read from its header: fit in 2048×2048, the
# short side down to 768, then 170 tokens a 512-pixel tile and 85 besides.
IMAGE_UNKNOWN_TOKENS = 85 + 170 * 8  # the tile rule's most (768×2048), for a size not read
# The most a vision model in common use makes of one image: Qwen-VL's default `max_pixels`
# at one token a 28×28 (Qwen2.5) or 32×32 (Qwen3) patch. OpenAI's tiles, Claude's pixels/750,
# Gemma's 256 and Pixtral's 16-pixel patches up to 1024 pixels all count fewer; the money
# cap's worst case counts every image as this.
IMAGE_MOST_TOKENS = 16_384


def image_url(part: object) -> str | None:
    """The URL of an `image_url` content part, or None for any other part."""
    if not isinstance(part, dict) or part.get("type") != "image_url":
        return None
    inner = part.get("image_url")
    url = inner.get("url") if isinstance(inner, dict) else None
    return url if isinstance(url, str) else None


def image_parts(messages: Iterable[object]) -> list[str]:
    """The image URLs in `messages` (content parts of any message)."""
    urls: list[str] = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            urls.extend(url for url in map(image_url, content) if url is not None)
    return urls


def image_tokens(url: str) -> int:
    """About how many tokens a model makes of the image at `url` (OpenAI's tile rule)."""
    size = image_size(url)
    if size is None:
        return IMAGE_UNKNOWN_TOKENS
    width, height = (float(side) for side in size)
    if max(width, height) > 2048:
        scale = 2048 / max(width, height)
        width, height = width * scale, height * scale
    if min(width, height) > 768:
        scale = 768 / min(width, height)
        width, height = width * scale, height * scale
    return 85 + 170 * math.ceil(width / 512) * math.ceil(height / 512)


def image_size(url: str) -> tuple[int, int] | None:
    """The width and height of a PNG, GIF, WebP or JPEG `data:` URL, from its header; None for
    anything else (a remote URL, another format, a damaged header)."""
    head, comma, data = url.partition(",")
    if not comma or not head.startswith("data:") or not head.endswith(";base64"):
        return None
    try:
        return _dimensions(lambda start, count: _decoded(data, start, count))
    except (ValueError, IndexError):
        return None


def _decoded(data: str, start: int, count: int) -> bytes:
    """Bytes `start:start+count` of the base64 text `data`, decoding only the quads holding them."""
    import base64  # only for an image

    first = start // 3
    quads = data[4 * first : 4 * (-(-(start + count) // 3))]
    return base64.b64decode(quads)[start - 3 * first : start - 3 * first + count]


def _dimensions(read: Callable[[int, int], bytes]) -> tuple[int, int] | None:
    head = read(0, 30)
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return int.from_bytes(head[6:8], "little"), int.from_bytes(head[8:10], "little")
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        kind = head[12:16]
        if kind == b"VP8 ":
            return int.from_bytes(head[26:28], "little") & 0x3FFF, int.from_bytes(
                head[28:30], "little"
            ) & 0x3FFF
        if kind == b"VP8L":
            bits = int.from_bytes(head[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        if kind == b"VP8X":
            return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
        return None
    if head[:2] == b"\xff\xd8":
        return _jpeg_dimensions(read)
    return None


def _jpeg_dimensions(read: Callable[[int, int], bytes]) -> tuple[int, int] | None:
    """A JPEG's size from its first frame header (SOF0-SOF15 but DHT, JPG and DAC), walking
    the segments before it."""
    at = 2
    for _ in range(1000):  # a real file has a few dozen segments before its frame
        marker = read(at, 4)
        if len(marker) < 4 or marker[0] != 0xFF:
            return None
        kind = marker[1]
        if kind == 0xFF:  # fill byte
            at += 1
            continue
        if 0xC0 <= kind <= 0xCF and kind not in (0xC4, 0xC8, 0xCC):
            frame = read(at + 5, 4)
            return int.from_bytes(frame[2:4], "big"), int.from_bytes(frame[0:2], "big")
        at += 2 + int.from_bytes(marker[2:4], "big")
    return None
