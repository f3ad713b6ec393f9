"""README.md and docs/ stand on their own: every relative link leads to a file of the repository,
and nothing points outside it (the API reference links to the same guides, served at /docs/)."""

import re
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_relative_link_leads_to_a_file_of_the_repository(document):
    text = document.read_text(encoding="utf-8")
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://", "#", "/")):
            continue
        path = (document.parent / target.split("#")[0]).resolve()
        assert path.is_relative_to(ROOT), f"{document.name} links outside the repository: {target}"
        assert path.exists(), f"{document.name} links to a missing file: {target}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_no_document_refers_to_files_outside_the_repository(document):
    text = document.read_text(encoding="utf-8")
    assert "../" not in text, f"{document.name} refers to a path outside the repository"
    assert "CONTRACT.md" not in text
