"""Attachments (`-a FILE`): images as `image_url` parts, documents as Venice `file` parts.

The parts are Venice's (swagger `ChatCompletionRequest` user content):
- an image: `{"type": "image_url", "image_url": {"url": "data:image/png;base64,…"}}`, for a
  model with `supportsVision`, no more than its `maxImages` (1 without
  `supportsMultipleImages`);
- a document: `{"type": "file", "file": {"file_data": "data:application/pdf;base64,…",
  "filename": "report.pdf"}}` (PDF, EPUB, DOCX, PPTX, XLSX, XLS, CSV, text, Markdown, JSON,
  source code: Venice extracts the text before the model sees it).
Each file is at most 25 MB (Venice's `PAYLOAD_TOO_LARGE` limit). Everything is checked
before the request: a file that cannot go is refused with its reason, never sent anyway.
"""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from ..core.files import read_bytes

MAX_BYTES = 25 * 1024 * 1024
IMAGES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".gif": "image/gif",
}
DOCUMENTS = {
    ".pdf": "application/pdf",
    ".epub": "application/epub+zip",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".xls": "application/vnd.ms-excel",
    ".csv": "text/csv",
    ".md": "text/markdown",
    ".json": "application/json",
}


@dataclass(frozen=True)
class Attachment:
    name: str
    image: bool
    part: dict[str, Any]


def read_attachment(path: Path) -> Attachment:
    """`path` as a content part; `ConfigError` naming the file and why it cannot go."""
    where = f"-a {path}"
    data = read_bytes(path, where, MAX_BYTES, over="over Venice's limit of 25 MB a file")
    suffix = path.suffix.lower()
    if suffix in IMAGES:
        url = f"data:{IMAGES[suffix]};base64,{base64.b64encode(data).decode()}"
        return Attachment(path.name, True, {"type": "image_url", "image_url": {"url": url}})
    mime = DOCUMENTS.get(suffix)
    if mime is None:
        if b"\0" in data[:8192] or not _utf8(data):
            raise ConfigError(
                f"{where}: not an image (PNG, JPEG, WebP, GIF), a document (PDF, EPUB, DOCX, PPTX, "
                "XLSX, XLS) or text, so no model part can carry it"
            )
        mime = mimetypes.types_map.get(suffix, "text/plain")
        mime = mime if mime.startswith("text/") else "text/plain"  # code: read as text
    file_data = f"data:{mime};base64,{base64.b64encode(data).decode()}"
    return Attachment(
        path.name, False, {"type": "file", "file": {"file_data": file_data, "filename": path.name}}
    )


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def refusal(
    attachments: Sequence[Attachment], model: str, vision: bool | None, max_images: int | None
) -> str | None:
    """Why these attachments cannot go to `model` (capabilities from `/models`), or None.
    A server that does not say (not Venice) is not second-guessed."""
    images = [item.name for item in attachments if item.image]
    if not images:
        return None
    if vision is False:
        return (
            f"-a {images[0]}: {model} cannot see images (/models: supportsVision false); "
            "choose a vision model (venice-agent --model …) or leave the image out"
        )
    if max_images is not None and len(images) > max_images:
        return (
            f"-a: {len(images)} images, and {model} takes at most {max_images} a request (/models maxImages)"
        )
    return None
