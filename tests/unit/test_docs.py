"""The documentation stays true: the configuration page is the settings class as it is, every
repository path a page names exists, and the site builds with `mkdocs build --strict`."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from bot_memory.settings import MemorySettings

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# A path in backticks that starts with one of the repository's own folders.
REPO_PATH = re.compile(r"`((?:bot_memory|bot_memory_aiogram|examples|bench|locales|docs)/[^`\s]*)`")


def _generator() -> ModuleType:
    if "gen_config" in sys.modules:
        return sys.modules["gen_config"]
    spec = importlib.util.spec_from_file_location("gen_config", ROOT / "docs" / "gen_config.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_config"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_configuration_page_is_the_settings_class() -> None:
    gen = _generator()
    committed = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert committed == gen.render(), (
        "docs/configuration.md differs from bot_memory/settings.py and its template:"
        f" regenerate it with `{gen.COMMAND}` and commit the result"
    )


def test_every_setting_is_on_the_configuration_page_with_a_description() -> None:
    gen = _generator()
    source = gen.read_source((ROOT / "bot_memory" / "settings.py").read_text(encoding="utf-8"))
    assert gen.check_notes(source, set(MemorySettings.model_fields)) == []
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for name, info in MemorySettings.model_fields.items():
        assert f"`{gen.env_names(name, info.validation_alias)[0]}`" in page, name


def test_the_generator_reads_comments_sections_and_aliases() -> None:
    gen = _generator()
    source = gen.read_source(
        "class MemorySettings(BaseSettings):\n"
        "    model_config = SettingsConfigDict(env_prefix='BOT_MEMORY_')\n"
        "\n"
        "    # --- first part ------\n"
        "    # Above,\n"
        "    # on two lines.\n"
        "    a: int = 1  # and beside\n"
        "    b: str | None = None\n"
        "\n"
        "    # --- second part ---\n"
        "    c: float = 2.0  # only beside\n"
    )
    assert [(s.title, s.fields) for s in source.sections] == [
        ("first part", ["a", "b"]),
        ("second part", ["c"]),
    ]
    assert source.comments == {"a": "Above, on two lines. and beside", "b": "", "c": "only beside"}
    assert gen.show_type(source.types["b"]) == "`str`"
    assert gen.show_default(None) == "unset"
    assert gen.show_default(frozenset()) == "empty"
    assert gen.show_default(21600.0) == "`21600`"
    info = MemorySettings.model_fields["llm_api_key"]
    assert gen.env_names("llm_api_key", info.validation_alias) == [
        "LLM_API_KEY",
        "BOT_MEMORY_LLM_API_KEY",
        "OPENAI_API_KEY",
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_repository_path_a_page_names_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for path in REPO_PATH.findall(text):
        bare = path.split("#")[0].rstrip(".,:;)")
        if any(ch in bare for ch in "<>*{"):  # a pattern such as locales/<language>/*.ftl
            continue
        assert (ROOT / bare).exists(), f"{page.relative_to(ROOT)} names {path}, which is gone"


def test_the_readme_links_only_to_pages_that_exist() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)#\s]+)", text)
    assert links, "the README links into docs/"
    for link in links:
        assert (ROOT / link).exists(), link


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (it is in the dev extra: make .venv/.installed)")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
