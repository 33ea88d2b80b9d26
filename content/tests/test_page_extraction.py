"""What a capture keeps of a page (SPEC §15, round 4): code languages, quotes, images, titles."""

from __future__ import annotations

from typing import Any

import pytest

from content.models import Bookmark
from content.text import page, page_markdown

ARTICLE = """<html><head><title>Guide</title></head><body><article>
<h1>Getting started</h1>
<p>This guide explains the first steps in enough words for the extractor to keep the text.</p>
<div class="highlight"><pre><code class="language-python">def add(x, y):
    return x + y
</code></pre></div>
<p>The function above adds two numbers, which is all that it does in this short guide.</p>
<pre data-lang="Rust">fn main() {}</pre>
<blockquote><p>Simplicity is prerequisite for reliability, said someone wise.</p>
<p>And a second paragraph of the same quote.</p></blockquote>
<p>Here is the diagram that shows how the parts fit together in the running system.</p>
<figure><img src="https://example.com/diagram.png" alt="The diagram"></figure>
<img src="data:image/png;base64,iVBORw0KGgo=" alt="inline">
<p>The end of the guide, with a closing sentence long enough to be kept as text.</p>
</article></body></html>"""


def test_code_fences_keep_their_language() -> None:
    content = page.extract_html(ARTICLE).content or ""
    assert "```python\ndef add(x, y):\n    return x + y\n```" in content
    assert "```rust\nfn main() {}\n```" in content
    assert "TIDDLY" not in content


def test_blockquotes_stay_quotes() -> None:
    content = page.extract_html(ARTICLE).content or ""
    assert (
        "> Simplicity is prerequisite for reliability, said someone wise.\n>\n"
        "> And a second paragraph of the same quote." in content
    )


def test_images_become_markdown_images_and_inline_data_is_dropped() -> None:
    content = page.extract_html(ARTICLE).content or ""
    assert "![The diagram](https://example.com/diagram.png)" in content
    assert "data:image" not in content


def test_a_page_cannot_forge_the_markers() -> None:
    marks = page_markdown.Marks("abc")
    forged = "Text TIDDLYQUOTESTARTzzz quoted TIDDLYQUOTEENDzzz"
    assert page_markdown.finish(forged, marks) == forged
    assert page_markdown.finish(f"a {marks.quote_start} lost", marks) == "alost"


@pytest.mark.parametrize(
    ("body", "title"),
    [
        (b"Intro line\n\n# The Title #\n\nText", "The Title"),
        (b"```\n# not a heading\n```\n## Real heading\n", "Real heading"),
        (b"no heading here", None),
    ],
)
def test_markdown_and_text_take_their_first_heading_as_title(body: bytes, title: str) -> None:
    assert page.extract(body, content_type="text/markdown").title == title
    assert page.extract(body, content_type="text/plain").title == title


def pdf(text: str, *, title: str | None = None) -> bytes:
    """A one-page PDF showing ``text``, with ``title`` in its document information."""
    stream = f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    if title is not None:
        objects.append(f"<< /Title ({title}) >>".encode())
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    info = b" /Info 6 0 R" if title is not None else b""
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        info,
        xref,
    )
    return bytes(out)


def test_a_pdf_takes_its_document_title_else_its_first_line() -> None:
    titled = page.extract(
        pdf("Quarterly report", title="Q3 Results"), content_type="application/pdf"
    )
    assert titled.title == "Q3 Results"
    assert "Quarterly report" in (titled.content or "")
    untitled = page.extract(pdf("Quarterly report"), content_type="application/pdf")
    assert untitled.title == "Quarterly report"


@pytest.mark.django_db
def test_page_html_capture_keeps_languages_quotes_and_images(api: Any) -> None:
    response = api.post(
        "/api/bookmarks/",
        {"url": "https://intranet.example/guide", "page_html": ARTICLE},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["capture"]["status"] == "done"
    content = Bookmark.objects.get(pk=response.json()["id"]).content
    assert "```python\n" in content
    assert "> Simplicity is prerequisite" in content
    assert "![The diagram](https://example.com/diagram.png)" in content
