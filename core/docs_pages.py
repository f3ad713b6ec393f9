"""The pages a person opens in a browser besides the sign-in and the admin: the landing page at
`/`, the guides of docs/ served at /docs/<name>.md (so that the API references and the admin can
link to them by URL, offline, from the running service), and the API reference of v2 beside v1's.

Only files of the docs/ folder whose names are plain words are served (the guides, and the charts
they show); raw HTML in the Markdown is shown as text, never rendered.
"""

import re
from functools import cache
from pathlib import Path

from django.conf import settings
from django.http import FileResponse, Http404
from django.shortcuts import redirect, render
from django.utils.safestring import mark_safe
from drf_spectacular.views import SpectacularSwaggerView
from markdown_it import MarkdownIt

DOCS_DIR = Path(settings.BASE_DIR) / "docs"
GUIDE_LINK = re.compile(r"^(?:\.?/)?(?:docs/)?(?P<name>[a-z0-9-]+\.md)(?P<anchor>#.*)?$")
GUIDE_NAME = re.compile(r"[a-z0-9-]+\.md")
CHART_NAME = re.compile(r"[a-z0-9-]+\.png")


def _link_open(renderer, tokens, index, options, env):
    """Links between guides (`webhooks.md`, `docs/webhooks.md`) point at their served pages."""
    token = tokens[index]
    match = GUIDE_LINK.match(token.attrGet("href") or "")
    if match and (DOCS_DIR / match["name"]).is_file():
        token.attrSet("href", f"/docs/{match['name']}{match['anchor'] or ''}")
    return renderer.renderToken(tokens, index, options, env)


def _slug(text: str) -> str:
    """A heading's anchor as the guides' own links write it (GitHub's rule: lower case, spaces to
    hyphens, punctuation dropped)."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _heading_open(renderer, tokens, index, options, env):
    """Headings carry the ids that `#anchor` links (`scheduling.md#recurring-series`) lead to."""
    inline = tokens[index + 1]
    tokens[index].attrSet("id", _slug("".join(child.content for child in inline.children or [])))
    return renderer.renderToken(tokens, index, options, env)


@cache
def _markdown() -> MarkdownIt:
    markdown = MarkdownIt("commonmark", {"html": False}).enable("table")
    markdown.add_render_rule("link_open", _link_open)
    markdown.add_render_rule("heading_open", _heading_open)
    return markdown


def _title(text: str, fallback: str) -> tuple[str, str]:
    """A guide's title (its first line) as plain text for <title>, and as HTML with its `code`."""
    first_line = text.splitlines()[0].lstrip("# ").strip() if text else fallback
    return first_line.replace("`", ""), mark_safe(_markdown().renderInline(first_line))  # noqa: S308 - html off


def _guides() -> list[tuple[str, str]]:
    return [
        (path.name, _title(path.read_text(encoding="utf-8"), path.stem)[1]) for path in sorted(DOCS_DIR.glob("*.md"))
    ]


def home(request):
    """`/`: what this service is and where everything a person opens is."""
    return render(request, "docs/home.html", {"guides": _guides(), "service_name": settings.SERVICE_NAME})


def guide_index(request):
    return render(request, "docs/index.html", {"guides": _guides(), "service_name": settings.SERVICE_NAME})


def guide_page(request, name: str):
    path = DOCS_DIR / name
    if CHART_NAME.fullmatch(name) and path.is_file():
        return FileResponse(path.open("rb"), content_type="image/png")
    if not GUIDE_NAME.fullmatch(name) or not path.is_file():
        raise Http404(f"There is no guide {name}.")
    text = path.read_text(encoding="utf-8")
    title, _ = _title(text, name)
    context = {"title": title, "body": _markdown().render(text), "service_name": settings.SERVICE_NAME}
    return render(request, "docs/page.html", context)


def without_slash(request):
    """`/v1/docs/` and the like: the same page without the trailing slash."""
    return redirect(request.path.rstrip("/"), permanent=True)


v2_reference = SpectacularSwaggerView.as_view(url_name="v2-openapi-json", title=f"{settings.SERVICE_NAME} API v2")
