"""The `<available_skills>` catalog and the lazy SkillCatalog.

`to_prompt` must be byte-identical to skills-ref 0.1.1's `skills_ref.prompt.to_prompt` on real
skill directories; `SkillCatalog` serves metadata, bodies and resource listings.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skills_lsp.core.engine.catalog import (
    MAX_RESOURCES,
    SkillCatalog,
    SkillMetadata,
    list_resources,
    to_prompt,
)
from skills_lsp.core.index.skill_index import SkillIndex, load_workspace_index
from skills_lsp.core.model import FileKind

skills_ref_prompt = pytest.importorskip("skills_ref.prompt")

# name (= directory) -> SKILL.md text; every one is a valid skills-ref skill (read_properties reads it).
SKILLS: dict[str, str] = {
    "pdf-tools": (
        "---\n"
        "name: pdf-tools\n"
        "description: Extracts text & tables from <PDF> files; say \"pdf\" or 'document' > twice.\n"
        "license: MIT\n"
        "---\n"
        "# PDF tools\n\nUse `pdftotext`.\n"
    ),
    "quoted": (
        "---\n"
        "name: quoted\n"
        'description: "Café \\"quoted\\" & <b>bold</b> — naïve 数据 \\u00e9t\\u00e9"\n'
        "metadata:\n"
        "  author: Zoë\n"
        "  version: '1.0'\n"
        "---\n"
        "Body with <html> & stuff.\n"
    ),
    "single": ("---\nname: single\ndescription: 'It''s a <test> & more, isn''t it? \"yes\"'\n---\n"),
    "folded": (
        "---\n"
        "name: folded\n"
        "description: >\n"
        "  Folded line one\n"
        "  with <tags> & \"quotes\" and 'apostrophes'\n"
        "\n"
        "  second paragraph: données.\n"
        "allowed-tools: Read Bash(git:*)\n"
        "---\n"
        "\n"
        "Body.\n"
    ),
    "folded-strip": (
        "---\n"
        "name: folded-strip\n"
        "description: >-\n"
        "    Strip chomping, more indent,\n"
        "    ends without newline & <ok>\n"
        "---\n"
    ),
    "literal": (
        '---\nname: literal\ndescription: |\n  line one & <one>\n  line two "two"\n\n  three\n'
        "compatibility: any\n---\nB\n"
    ),
    "données": "---\nname: données\ndescription: Non-ASCII name — ünïcödé ✓ 🙂 &amp; already escaped\n---\n",
    "padded": "---\nname: '  padded  '\ndescription: \"   spaces around <x>   \"\n---\n",
    "crlf": "---\r\nname: crlf\r\ndescription: Windows line endings & <crlf>\r\n---\r\nBody\r\n",
    "commented": (
        "---\n# a comment\nname: commented  # trailing comment\n"
        "description: \"Has a hash#inside and 'a: colon' in quotes\"  # comment\n---\n"
    ),
}


def write_skills(root: Path, skills: dict[str, str]) -> list[Path]:
    dirs = []
    for name, text in skills.items():
        directory = root / name
        directory.mkdir(parents=True)
        (directory / "SKILL.md").write_bytes(text.encode("utf-8"))
        dirs.append(directory)
    return dirs


def test_to_prompt_is_byte_identical_to_skills_ref(tmp_path: Path) -> None:
    write_skills(tmp_path, SKILLS)
    index = load_workspace_index(tmp_path)
    assert sorted(d.name.strip() for d in index) == sorted(n.strip() for n in SKILLS)  # every skill indexed
    docs = index.skills()
    dirs = [Path(d.path).parent for d in docs]
    expected = skills_ref_prompt.to_prompt(dirs)
    assert to_prompt(docs) == expected
    assert to_prompt(index.summaries()) == expected
    assert SkillCatalog(index).to_prompt() == expected
    # any order the caller chooses is kept
    assert to_prompt(reversed(docs)) == skills_ref_prompt.to_prompt(list(reversed(dirs)))
    # one skill at a time, so that a mismatch names its skill
    for doc, directory in zip(docs, dirs, strict=True):
        assert to_prompt([doc]) == skills_ref_prompt.to_prompt([directory]), doc.name


def test_to_prompt_matches_skills_ref_on_python_only_whitespace(tmp_path: Path) -> None:
    dirs = write_skills(tmp_path, {"sep": '---\nname: sep\ndescription: "Trailing separator\\x1f"\n---\n'})
    assert to_prompt(load_workspace_index(tmp_path)) == skills_ref_prompt.to_prompt(dirs)


def test_to_prompt_escapes_like_html_escape(tmp_path: Path) -> None:
    write_skills(tmp_path, {"x": "---\nname: x\ndescription: a&b <c> \"d\" 'e'\n---\n"})
    out = to_prompt(load_workspace_index(tmp_path))
    assert "\n<description>\na&amp;b &lt;c&gt; &quot;d&quot; &#x27;e&#x27;\n</description>\n" in out
    assert out.endswith("</skill>\n</available_skills>")
    assert f"\n<location>\n{(tmp_path / 'x' / 'SKILL.md').resolve()}\n</location>\n" in out


def test_to_prompt_without_locations(tmp_path: Path) -> None:
    write_skills(tmp_path, {"x": "---\nname: x\ndescription: d\n---\n"})
    out = to_prompt(load_workspace_index(tmp_path), locations=False)
    lines = ["<available_skills>", "<skill>", "<name>", "x", "</name>", "<description>", "d"]
    assert out == "\n".join([*lines, "</description>", "</skill>", "</available_skills>"])
    assert str(tmp_path) not in out


def test_to_prompt_location_is_resolved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "real"
    write_skills(real, {"linked": "---\nname: linked\ndescription: d\n---\n"})
    monkeypatch.chdir(tmp_path)
    index = load_workspace_index("real")  # relative paths in the index
    assert not Path(index.skills()[0].path).is_absolute()
    assert to_prompt(index) == skills_ref_prompt.to_prompt([Path("real/linked")])
    assert str((real / "linked" / "SKILL.md").resolve()) in to_prompt(index)


def test_to_prompt_empty() -> None:
    assert to_prompt([]) == "<available_skills>\n</available_skills>"
    assert to_prompt([]) == skills_ref_prompt.to_prompt([])
    assert to_prompt(SkillIndex()) == skills_ref_prompt.to_prompt([])
    assert SkillCatalog(SkillIndex()).to_prompt() == skills_ref_prompt.to_prompt([])


# --- SkillCatalog ---------------------------------------------------------------------------------


def _catalog_workspace(root: Path) -> Path:
    write_skills(
        root,
        {
            "pdf": "---\nname: pdf\ndescription: Read <PDF> & forms\n---\n# PDF\n\nSee references/REF.md.\n",
            "beta": "---\nname: beta\ndescription: Second\n---\nBeta body\n",
        },
    )
    skill = root / "pdf"
    files = [
        "scripts/run.sh",
        "scripts/b.py",
        "scripts/A.py",
        "scripts/sub/z.py",
        "scripts/sub/deeper/x.txt",
        "scripts/.hidden",
        "references/REF.md",
        "references/forms.md",
        "assets/logo.png",
        "assets/fonts/a.ttf",
        "other/ignored.txt",
        "README.md",
        "script/not-scripts.py",
        "Scripts/wrong-case.py",
    ]
    for rel in files:
        path = skill / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    (skill / "assets" / "empty-dir").mkdir()
    if hasattr(os, "symlink"):
        (skill / "scripts" / "link.py").symlink_to(skill / "scripts" / "run.sh")
        (skill / "scripts" / "dangling.py").symlink_to(skill / "missing.py")
        (skill / "references" / "linked-dir").symlink_to(skill / "other", target_is_directory=True)
    # a flat adk-skill skill: no directory of its own
    flat = root / ".skills" / "flat.md"
    flat.parent.mkdir(parents=True)
    flat.write_text("---\nname: flat\ndescription: A flat skill\n---\nFlat body\n", encoding="utf-8")
    (root / ".skills" / "scripts").mkdir()
    (root / ".skills" / "scripts" / "s.py").write_bytes(b"x")
    return skill


def test_catalog_metadata(tmp_path: Path) -> None:
    _catalog_workspace(tmp_path)
    index = load_workspace_index(tmp_path)
    catalog = SkillCatalog(index)
    metadata = catalog.list_metadata()
    assert [m.name for m in metadata] == ["beta", "flat", "pdf"]
    by_name = {d.name: d for d in index}
    for meta in metadata:
        doc = by_name[meta.name]
        assert meta == SkillMetadata(meta.name, doc.description, str(Path(doc.path).resolve()), doc.id)
        assert catalog.get_metadata(meta.name) == meta
        assert Path(meta.location).is_absolute()
    assert metadata[2].description == "Read <PDF> & forms"  # metadata is not escaped
    assert metadata[2].location == str((tmp_path / "pdf" / "SKILL.md").resolve())
    assert metadata[1].location == str((tmp_path / ".skills" / "flat.md").resolve())
    assert catalog.get_metadata("unknown") is None
    assert catalog.get_metadata("PDF") is None  # names are exact
    assert catalog.load_skill("unknown") is None
    assert SkillCatalog(SkillIndex()).list_metadata() == []


def test_catalog_load_skill_lists_resources(tmp_path: Path) -> None:
    skill = _catalog_workspace(tmp_path)
    catalog = SkillCatalog(load_workspace_index(tmp_path))
    loaded = catalog.load_skill("pdf")
    assert loaded is not None
    assert loaded.metadata == catalog.get_metadata("pdf")
    assert loaded.instructions == "# PDF\n\nSee references/REF.md."  # the body as indexed (trimmed)
    assert loaded.directory == str(skill)
    # scripts/, references/, assets/ in that order; in each folder its files (sorted) before its
    # sub-folders (sorted); no symlinks (to files or folders), nothing from other folders.
    assert loaded.resources == (
        "scripts/.hidden",
        "scripts/A.py",
        "scripts/b.py",
        "scripts/run.sh",
        "scripts/sub/z.py",
        "scripts/sub/deeper/x.txt",
        "references/REF.md",
        "references/forms.md",
        "assets/logo.png",
        "assets/fonts/a.ttf",
    )
    assert list(loaded.resources) == list_resources(skill)
    for group in ("scripts/", "references/", "assets/"):
        names = [r for r in loaded.resources if r.startswith(group) and r.count("/") == 1]
        assert names == sorted(names)


def test_catalog_load_skill_without_resources(tmp_path: Path) -> None:
    _catalog_workspace(tmp_path)
    catalog = SkillCatalog(load_workspace_index(tmp_path))
    beta = catalog.load_skill("beta")
    assert beta is not None
    assert beta.instructions == "Beta body"
    assert beta.resources == ()
    assert beta.directory == str(tmp_path / "beta")
    flat = catalog.load_skill("flat")
    assert flat is not None
    assert flat.instructions == "Flat body"
    assert flat.directory is None  # a flat skill has no folder: .skills/scripts is not its own
    assert flat.resources == ()


def test_catalog_follows_index_changes(tmp_path: Path) -> None:
    _catalog_workspace(tmp_path)
    index = load_workspace_index(tmp_path)
    catalog = SkillCatalog(index)
    beta = index.find_by_name("beta")
    assert beta is not None
    index.remove(beta.path)
    assert catalog.get_metadata("beta") is None
    assert [m.name for m in catalog.list_metadata()] == ["flat", "pdf"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_catalog_skips_symlinks_inside_resource_folders(tmp_path: Path) -> None:
    skill = _catalog_workspace(tmp_path)
    index = load_workspace_index(tmp_path)
    doc = index.find_by_name("pdf")
    assert doc is not None and doc.kind is FileKind.AGENT_SKILL
    loaded = SkillCatalog(index).load_skill("pdf")
    assert loaded is not None
    for rel in ("scripts/link.py", "scripts/dangling.py"):
        assert (skill / rel).is_symlink() and rel not in loaded.resources
    assert (skill / "references/linked-dir/ignored.txt").is_file()
    assert not any(r.startswith("references/linked-dir") for r in loaded.resources)


def test_resource_listing_is_capped(tmp_path: Path) -> None:
    skill = write_skills(tmp_path, {"many": "---\nname: many\ndescription: d\n---\n"})[0]
    (skill / "scripts").mkdir()
    (skill / "scripts" / "run.py").write_bytes(b"")
    (skill / "assets").mkdir()
    for i in range(MAX_RESOURCES + 10):
        (skill / "assets" / f"{i:04d}.bin").write_bytes(b"")
    loaded = SkillCatalog(load_workspace_index(tmp_path)).load_skill("many")
    assert loaded is not None
    assert len(loaded.resources) == MAX_RESOURCES
    assert loaded.resources[:3] == ("scripts/run.py", "assets/0000.bin", "assets/0001.bin")
    assert loaded.resources[-1] == f"assets/{MAX_RESOURCES - 2:04d}.bin"


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlinked_resource_folder_is_not_followed(tmp_path: Path) -> None:
    skill = write_skills(tmp_path, {"linked": "---\nname: linked\ndescription: d\n---\n"})[0]
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "secret.txt").write_bytes(b"")
    (outside / "sub" / "x").write_bytes(b"")
    (skill / "scripts").symlink_to(outside, target_is_directory=True)
    loaded = SkillCatalog(load_workspace_index(tmp_path)).load_skill("linked")
    assert loaded is not None
    assert loaded.resources == ()  # got ('scripts/secret.txt', 'scripts/sub/x')
