"""`-a FILE`: images and documents go with the question as Venice's content parts, checked
against the model's capabilities before the request; an attachment is local data.

The real command against the fake server; the request it recorded is what Venice would get."""

from __future__ import annotations

import base64
import json
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from cli_support import fake_venice, mcp_config, run_cli
from venice_terminal_agent.core.tokens import (
    IMAGE_MOST_TOKENS,
    IMAGE_UNKNOWN_TOKENS,
    image_size,
    image_tokens,
)

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
QUESTION = "What is in these?"


def vision(**capabilities: Any) -> dict[str, Any]:
    return {"model_spec": {"capabilities": {"supportsFunctionCalling": True, **capabilities}}}


def ask(folder: Path, base_url: str, *files: Path, extra: tuple[str, ...] = ("--no-mcp",)) -> Any:
    flags = [part for path in files for part in ("-a", str(path))]
    return run_cli(folder, base_url, *extra, "--json", *flags, QUESTION)


def chats(fake: Any) -> list[dict[str, Any]]:
    return fake.chat_bodies()


def test_an_image_goes_to_a_vision_model_as_an_image_part(tmp_path: Path) -> None:
    picture = tmp_path / "dot.png"
    picture.write_bytes(PNG)
    script = {
        **vision(supportsVision=True, supportsMultipleImages=True, maxImages=2),
        "replies": [{"text": "A dot."}],
    }
    with fake_venice(script, tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, picture)
        (body,) = chats(fake)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"] == "A dot."
    assert body["messages"][-1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": QUESTION},
            {
                "type": "image_url",
                "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
            },
        ],
    }


def test_documents_go_as_venice_file_parts(tmp_path: Path) -> None:
    table = tmp_path / "figures.csv"
    table.write_text("year,total\n2025,12\n")
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    code = tmp_path / "tool.py"
    code.write_text("print('hi')\n")
    with fake_venice([{"text": "They match."}], tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, table, pdf, code)
        (body,) = chats(fake)
    assert done.returncode == 0, done.stderr
    parts = body["messages"][-1]["content"]
    assert parts[0] == {"type": "text", "text": QUESTION}

    def part(mime: str, data: bytes, name: str) -> dict[str, Any]:
        encoded = base64.b64encode(data).decode()
        return {"type": "file", "file": {"file_data": f"data:{mime};base64,{encoded}", "filename": name}}

    assert parts[1:] == [
        part("text/csv", table.read_bytes(), "figures.csv"),
        part("application/pdf", pdf.read_bytes(), "report.pdf"),
        part("text/x-python", code.read_bytes(), "tool.py"),
    ]


@pytest.mark.parametrize(
    ("capabilities", "images", "reason"),
    [
        ({"supportsVision": False}, 1, "fake-model cannot see images (/models: supportsVision false)"),
        (
            {"supportsVision": True, "supportsMultipleImages": False},
            2,
            "2 images, and fake-model takes at most 1",
        ),
        ({"supportsVision": True, "supportsMultipleImages": True, "maxImages": 2}, 3, "takes at most 2"),
    ],
)
def test_images_a_model_cannot_take_are_refused_before_the_request(
    tmp_path: Path, capabilities: dict[str, Any], images: int, reason: str
) -> None:
    pictures = []
    for number in range(images):
        picture = tmp_path / f"p{number}.png"
        picture.write_bytes(PNG)
        pictures.append(picture)
    with fake_venice(vision(**capabilities), tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, *pictures)
        assert chats(fake) == []
    assert done.returncode == 2
    assert reason in done.stderr


def test_files_that_cannot_go_are_refused_with_their_reason(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    with big.open("wb") as out:
        out.truncate(25 * 1024 * 1024 + 1)  # sparse: nothing is written
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\x00\x01\xff" * 10)
    with fake_venice([], tmp_path) as fake:
        too_big = ask(tmp_path, fake.base_url, big)
        unknown = ask(tmp_path, fake.base_url, binary)
        missing = ask(tmp_path, fake.base_url, tmp_path / "nowhere.pdf")
        assert chats(fake) == []
    assert too_big.returncode == unknown.returncode == missing.returncode == 2
    assert "over Venice's limit of 25 MB a file" in too_big.stderr
    assert "blob.bin: not an image" in unknown.stderr
    assert "nowhere.pdf: no such file" in missing.stderr


def test_an_attachment_is_local_data_so_a_read_only_server_tool_asks_first(tmp_path: Path) -> None:
    """The time server is trusted and its tool read-only, so it runs without asking; after an
    attachment it may carry the file's contents away, so it asks (no terminal here: no)."""
    notes = tmp_path / "notes.md"
    notes.write_text("# private plans\n")
    config = mcp_config(tmp_path, paid_server=False)
    script = [
        {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]},
        {"text": "I could not check the time."},
    ]
    with fake_venice(script, tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, notes, extra=("--mcp-config", str(config), "--no-files"))
        bodies = chats(fake)
    assert done.returncode == 0, done.stderr
    tool_message = bodies[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "there was no one to ask" in tool_message["content"]
    assert json.loads(done.stdout)["steps"] == []  # it never ran


def screenshot(path: Path, width: int = 800, height: int = 500) -> Path:
    """A real PNG of noise, `width`×`height`, about 3 bytes a pixel (a 1.2 MB screenshot)."""
    rows = b"".join(b"\0" + os.urandom(width * 3) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 0)) + chunk(b"IEND", b"")
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + body)
    return path


def test_a_screenshot_is_counted_as_an_image_not_as_its_base64(tmp_path: Path) -> None:
    """A 1.2 MB PNG is 1.6 MB of base64; counted as text it needed about 534k tokens and a
    262k-token vision model refused it (`context_full`). A model makes about a thousand of it."""
    picture = screenshot(tmp_path / "chart.png")
    assert picture.stat().st_size > 1_200_000
    with fake_venice({"listing": "venice", "replies": [{"text": "A chart."}]}, tmp_path) as fake:
        done = ask(tmp_path, fake.base_url, picture, extra=("--no-mcp", "--model", "qwen-3-8-27b"))
        (body,) = chats(fake)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"] == "A chart."
    assert body["messages"][-1]["content"][1]["type"] == "image_url"


def test_the_money_cap_counts_an_image_at_the_most_a_model_makes_of_one(tmp_path: Path) -> None:
    """The cap's worst case counted the image's 1.6 MB of base64 as 1.6M input tokens ($0.72
    at $0.45 a million) and refused a 10-cent question; an image is at most 16,384 tokens."""
    picture = screenshot(tmp_path / "chart.png")
    with fake_venice({"listing": "venice", "replies": [{"text": "A chart."}]}, tmp_path) as fake:
        flags = ("--no-mcp", "--model", "qwen-3-8-27b", "--max-usd", "0.10")
        done = run_cli(
            tmp_path,
            fake.base_url,
            *flags,
            "--json",
            "-a",
            str(picture),
            QUESTION,
            MAX_COMPLETION_TOKENS="1000",
        )
        assert len(chats(fake)) == 1
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stopped_because"] == "answered"


def _b64(data: bytes) -> str:
    return "data:image/x;base64," + base64.b64encode(data).decode()


def _jpeg(width: int, height: int) -> bytes:
    exif = b"\xff\xe1" + (2 + 60_000).to_bytes(2, "big") + b"\0" * 60_000  # a camera's EXIF first
    frame = (
        b"\xff\xc2\x00\x11\x08" + height.to_bytes(2, "big") + width.to_bytes(2, "big") + b"\x03" + b"\0" * 9
    )
    return (
        b"\xff\xd8"
        + b"\xff\xe0\x00\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0"
        + exif
        + b"\xff\xc4\x00\x04\0\0"
        + frame
    )


@pytest.mark.parametrize(
    ("data", "size"),
    [
        (PNG, (1, 1)),
        (b"GIF89a" + (640).to_bytes(2, "little") + (480).to_bytes(2, "little") + b"\0" * 20, (640, 480)),
        (
            b"RIFF\0\0\0\0WEBPVP8X" + b"\0" * 8 + (1919).to_bytes(3, "little") + (1079).to_bytes(3, "little"),
            (1920, 1080),
        ),
        (
            b"RIFF\0\0\0\0WEBPVP8L\0\0\0\0\x2f" + ((99) | (49 << 14)).to_bytes(4, "little") + b"\0" * 8,
            (100, 50),
        ),
        (
            b"RIFF\0\0\0\0WEBPVP8 \0\0\0\0\0\0\0\x9d\x01\x2a"
            + (300).to_bytes(2, "little")
            + (200).to_bytes(2, "little"),
            (300, 200),
        ),
        (_jpeg(4032, 3024), (4032, 3024)),
        (b"\xff\xd8\xff\xe0\x00", None),  # cut short
        (b"not an image at all", None),
    ],
)
def test_an_images_size_is_read_from_its_header(data: bytes, size: tuple[int, int] | None) -> None:
    assert image_size(_b64(data)) == size


def test_an_image_is_estimated_by_the_tile_rule_and_never_above_the_most() -> None:
    assert image_tokens(_b64(PNG)) == 85 + 170  # one tile
    assert image_tokens(_b64(_jpeg(4032, 3024))) == 85 + 170 * 4  # fitted to 1024×768: 2×2 tiles
    assert image_tokens("https://example.com/a.png") == IMAGE_UNKNOWN_TOKENS
    assert (
        max(image_tokens(_b64(_jpeg(w, h))) for w, h in [(1, 60000), (60000, 60000), (768, 2048)])
        <= IMAGE_MOST_TOKENS
    )
