"""`-a FILE`: images and documents go with the question as Venice's content parts, checked
against the model's capabilities before the request; an attachment is local data.

The real command against the fake server; the request it recorded is what Venice would get."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from cli_support import fake_venice, mcp_config, run_cli

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
    assert "nowhere.pdf: cannot read it" in missing.stderr


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
