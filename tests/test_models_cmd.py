"""`venice-agent models` against the fake Venice serving real entries of Venice's /models
(testing/venice_models.json), and a deprecated model in use said once, at start."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import fake_venice, run_cli

VENICE = {"listing": "venice", "replies": []}


def ids(stdout: str) -> list[str]:
    return [line.split()[0] for line in stdout.splitlines()[1:] if not line.startswith(" ")]


def test_models_lists_ids_context_prices_and_capabilities_without_a_key(tmp_path: Path) -> None:
    with fake_venice(VENICE, tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "models", VENICE_API_KEY=None)
        seen = fake.requests()
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["MODEL", "CONTEXT", "IN", "$/M", "CACHED", "OUT", "$/M", "SUPPORTS"]
    glm = next(line for line in lines if line.startswith("zai-org-glm-5-2 "))
    # 1,000,000 tokens of context; $1.40 in, $0.26 cached, $4.40 out per million (Venice's figures)
    assert glm.split()[1:5] == ["1M", "1.40", "0.26", "4.40"]
    assert glm.endswith("tools, reasoning (none|high|max), schema, web search")
    assert (
        next(line for line in lines if line.startswith("qwen-3-8-27b ")).split()[3] == "-"
    )  # no cache price
    e2ee = lines.index(next(line for line in lines if line.startswith("e2ee-gemma-4-31b ")))
    assert lines[e2ee].endswith("reasoning, web search, E2EE, TEE")
    assert lines[e2ee + 1] == "  ! deprecated since 2026-08-27, removed 2026-08-27"
    # One request, without a key: Venice lets anyone read its models.
    assert [(r["method"], r["path"]) for r in seen] == [("GET", "/api/v1/models")]
    assert "authorization" not in seen[0]["headers"]


def test_models_filters_keep_models_with_every_capability_asked(tmp_path: Path) -> None:
    with fake_venice(VENICE, tmp_path) as fake:

        def listed(*flags: str) -> list[str]:
            done = run_cli(tmp_path, fake.base_url, "models", *flags)
            assert done.returncode == 0, done.stderr
            return ids(done.stdout)

        assert listed("--private") == ["e2ee-gemma-4-31b"]
        assert listed("--vision", "--reasoning") == ["claude-opus-4-7", "qwen-3-8-27b", "kimi-k3"]
        assert listed("--tools", "--search", "GLM") == ["zai-org-glm-5-2"]  # e2ee-gemma calls no tools
        assert "hermes-3-llama-3.1-405b" not in listed("--tools")
        assert listed("--search", "Llama 3.3") == ["llama-3.3-70b"]  # the name counts too
        none = run_cli(tmp_path, fake.base_url, "models", "--search", "no-such-model")
    assert none.returncode == 0 and none.stdout == ""
    assert "none of the 8 models matches these filters" in none.stderr


def test_models_json_carries_prices_capabilities_and_deprecation(tmp_path: Path) -> None:
    script = json.loads(
        (Path(__file__).parents[1] / "src/venice_terminal_agent/testing/venice_models.json").read_text()
    )
    old = next(entry for entry in script if entry["id"] == "llama-3.3-70b")
    old["model_spec"]["deprecation"] = {
        "date": "2026-12-01T00:00:00.000Z",
        "replacementModelId": "zai-org-glm-5-2",
    }
    with fake_venice({"listing": script, "replies": []}, tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "models", "--json", "--search", "llama-3.3")
        table = run_cli(tmp_path, fake.base_url, "models", "--search", "llama-3.3")
    assert done.returncode == 0, done.stderr
    [model] = json.loads(done.stdout)
    assert model["id"] == "llama-3.3-70b" and model["context_tokens"] == 128000
    assert model["usd_per_million_tokens"] == {"input": 0.7, "cache_input": None, "output": 2.8}
    assert model["function_calling"] is True and model["reasoning"] is False and model["e2ee"] is False
    assert model["deprecation"] == {
        "date": "2026-12-01T00:00:00.000Z", "removes_at": None, "replacement": "zai-org-glm-5-2"
    }  # fmt: skip
    assert "  ! deprecated since 2026-12-01; use zai-org-glm-5-2 instead" in table.stdout.splitlines()


def test_a_server_that_fails_its_listing_is_one_line_and_exit_7(tmp_path: Path) -> None:
    with fake_venice({"models_error": {"status": 500}, "replies": []}, tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "models")
    assert done.returncode == 7 and done.stdout == ""
    assert done.stderr.startswith("venice-agent: cannot list models: the model server answered 500")


def test_a_deprecated_model_in_use_is_said_once_at_start(tmp_path: Path) -> None:
    script = {"listing": "venice", "replies": [{"text": "Hello."}]}
    with fake_venice(script, tmp_path) as fake:
        # --no-e2ee: the listing says it is E2EE, and the fake has no attestation here.
        done = run_cli(
            tmp_path, fake.base_url, "--no-mcp", "--no-e2ee", "hi", VENICE_MODEL="e2ee-gemma-4-31b"
        )
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "is deprecated" in line]
    assert said == ["venice-agent: e2ee-gemma-4-31b is deprecated since 2026-08-27, removed 2026-08-27"]
    assert done.stdout.startswith("Hello.")


def test_the_deprecation_header_is_said_at_start_and_not_again_after_the_answer(tmp_path: Path) -> None:
    headers = {"x-venice-model-deprecation-warning": "This model is deprecated",
               "x-venice-model-deprecation-date": "2026-12-31"}  # fmt: skip
    with fake_venice({"headers": headers, "replies": [{"text": "Hello."}]}, tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "--no-mcp", "hi")
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "is deprecated" in line]
    assert said == ["venice-agent: fake-model: This model is deprecated (2026-12-31)"]
    banner_end = done.stderr.splitlines().index(said[0])
    assert any(line.startswith("  model") for line in done.stderr.splitlines()[:banner_end])


def test_the_banner_and_the_receipt_say_the_window_as_models_does(tmp_path: Path) -> None:
    with fake_venice({"listing": "venice", "replies": [{"text": "hello"}]}, tmp_path) as fake:
        listed = run_cli(tmp_path, fake.base_url, "models", VENICE_API_KEY=None)
        asked = run_cli(tmp_path, fake.base_url, "--no-mcp", "hi", VENICE_MODEL="zai-org-glm-5-2")
    glm = next(line for line in listed.stdout.splitlines() if line.startswith("zai-org-glm-5-2 "))
    assert glm.split()[1] == "1M"
    assert "  context  1M tokens (the model list)" in asked.stderr.splitlines()  # not 1.0M
    assert asked.stdout.splitlines()[-1].endswith(" · 0% of 1M")
