"""The project's guides (docs/*.md) served as pages at /docs/<name>.md, so that the API reference
and the admin can link to them by URL, offline, from the running service.

Only files of the docs/ folder whose names are plain words are served; raw HTML in the Markdown is
shown as text, never rendered.
"""

import re
from functools import cache
from pathlib import Path

from django.conf import settings
from django.http import Http404
from django.shortcuts import render
from markdown_it import MarkdownIt

DOCS_DIR = Path(settings.BASE_DIR) / "docs"
GUIDE_LINK = re.compile(r"^(?:\.?/)?(?:docs/)?(?P<name>[a-z0-9-]+\.md)(?P<anchor>#.*)?$")


def _link_open(renderer, tokens, index, options, env):
    """Links between guides (`webhooks.md`, `docs/webhooks.md`) point at their served pages."""
    token = tokens[index]
    match = GUIDE_LINK.match(token.attrGet("href") or "")
    if match and (DOCS_DIR / match["name"]).is_file():
        token.attrSet("href", f"/docs/{match['name']}{match['anchor'] or ''}")
    return renderer.renderToken(tokens, index, options, env)


@cache
def _markdown() -> MarkdownIt:
    markdown = MarkdownIt("commonmark", {"html": False}).enable("table")
    markdown.add_render_rule("link_open", _link_open)
    return markdown


def _guides() -> list[tuple[str, str]]:
    guides = []
    for path in sorted(DOCS_DIR.glob("*.md")):
        first_line = path.read_text(encoding="utf-8").splitlines()[0] if path.stat().st_size else path.stem
        guides.append((path.name, first_line.lstrip("# ").strip()))
    return guides


def guide_index(request):
    return render(request, "docs/index.html", {"guides": _guides(), "service_name": settings.SERVICE_NAME})


def guide_page(request, name: str):
    path = DOCS_DIR / name
    if not re.fullmatch(r"[a-z0-9-]+\.md", name) or not path.is_file():
        raise Http404(f"There is no guide {name}.")
    text = path.read_text(encoding="utf-8")
    title = text.splitlines()[0].lstrip("# ").strip() if text else name
    context = {"title": title, "body": _markdown().render(text), "service_name": settings.SERVICE_NAME}
    return render(request, "docs/page.html", context)
