"""Editing and saving in forms (SPEC §9): ``/library/<type>/<id>/edit/``, a quick note and a
bookmark by URL.

Saves go through ``services.update_item``/``create_item`` with source ``library``. The edit form
carries the ``updated_at`` it was made from: saved after someone else changed the item, the
service refuses (409, nothing written) and the page shows the person's text — still in the form,
ready to save again — beside the item as it now is.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from content import queries, services
from content.errors import StaleItem, UrlConflict
from content.library import web
from content.models import Bookmark, Item, Note
from content.services import Precondition
from tiddly.errors import TiddlyError, ValidationFailed

TITLE_CHARS = 200


class EditForm(forms.Form):
    url = forms.CharField(required=False, label="URL", max_length=2048)
    title = forms.CharField(required=False, label="Title")
    description = forms.CharField(required=False, label="Description", widget=forms.Textarea(
        attrs={"rows": 3}))  # fmt: skip
    tags = forms.CharField(
        required=False, label="Tags", help_text="Separated by spaces or commas, e.g. reading python"
    )
    content = forms.CharField(required=False, label="Content", strip=False,
                              widget=forms.Textarea(attrs={"rows": 18, "spellcheck": "false"}))  # fmt: skip
    updated_at = forms.DateTimeField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, item: Item, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.item = item
        if not hasattr(item, "url"):
            del self.fields["url"]
        if not inline_content(item):
            del self.fields["content"]


def inline_content(item: Item) -> bool:
    """Megabytes in a textarea make the page slow to send and render (the admin's limit)."""
    return len(item.content or "") <= settings.TIDDLY_ADMIN_INLINE_CONTENT_CHARS


def split_tags(text: str) -> list[str]:
    return [t for t in re.split(r"[,\s]+", text or "") if t]


def initial_of(item: Item) -> dict[str, Any]:
    return {
        **({"url": item.url} if isinstance(item, Bookmark) else {}),
        "title": item.title or "",
        "description": item.description or "",
        "tags": " ".join(item.tag_names()),
        "content": item.content or "",
        "updated_at": item.updated_at.isoformat(),
    }


def _posted(form: EditForm) -> dict[str, Any]:
    data = form.cleaned_data
    fields: dict[str, Any] = {
        "title": data["title"].strip() or None,
        "description": data["description"].strip() or None,
        "tags": split_tags(data["tags"]),
    }
    if "url" in form.fields:
        fields["url"] = data["url"].strip()
    if "content" in form.fields:
        fields["content"] = _same_newlines(data["content"], form.item.content) or None
    return fields


def _same_newlines(posted: str, stored: str | None) -> str:
    """A textarea posts CRLF whatever the stored text used: keep the stored text's newlines."""
    if "\r\n" in posted and not (stored and "\r\n" in stored):
        return posted.replace("\r\n", "\n")
    return posted


@require_http_methods(["GET", "POST"])
@web.library_view
def edit_page(request: HttpRequest, type_name: str, pk: str) -> HttpResponse:
    owner = web.owner_of(request)
    ref = web.ref_of(type_name, pk)
    item = queries.get_owned(owner, ref)
    if item.is_deleted:
        return web.failed(request, TiddlyError("it is in the trash: restore it first to edit it."),
                          web.item_path(item))  # fmt: skip
    if request.method != "POST":
        return _form(request, EditForm(initial=initial_of(item), item=item))
    form = EditForm(request.POST, item=item)
    if not form.is_valid():
        return _form(request, form, status=400)
    precondition = Precondition(expected_updated_at=form.cleaned_data["updated_at"])
    try:
        services.update_item(owner=owner, ref=ref, data=services.item_fields(_posted(form)),
                             actor=web.ACTOR, precondition=precondition)  # fmt: skip
    except StaleItem:
        return _conflict(request, form, queries.get_owned(owner, ref))
    except ValidationFailed as error:
        _field_errors(form, error)
        return _form(request, form, status=400)
    except TiddlyError as error:
        form.add_error(None, error.message)
        return _form(request, form, status=error.status_code)
    return web.done(request, "Saved.", web.item_path(item))


def _form(request: HttpRequest, form: EditForm, status: int = 200, **extra: Any) -> HttpResponse:
    item = form.item
    context = {"form": form, "item": item, "title": item.display_title() or "Untitled",
               "inline_content": "content" in form.fields, **extra}  # fmt: skip
    return render(request, "library/edit.html", context, status=status)


def _conflict(request: HttpRequest, form: EditForm, current: Item) -> HttpResponse:
    """The person's form as they sent it (nothing lost), now based on the current version, and
    the current version beside it."""
    data = request.POST.copy()
    data["updated_at"] = current.updated_at.isoformat()
    mine = EditForm(data, item=current)
    mine.is_valid()
    return _form(request, mine, status=409, current=initial_of(current), current_item=current)


def _field_errors(form: forms.Form, error: ValidationFailed) -> None:
    fields = error.extra.get("fields")
    if not isinstance(fields, dict):
        form.add_error(None, error.message)
        return
    for name, messages in fields.items():
        for message in messages:
            form.add_error(name if name in form.fields else None, str(message))


# --- saving new items ---------------------------------------------------------------------------


class NoteForm(forms.Form):
    content = forms.CharField(label="Note", strip=False, widget=forms.Textarea(attrs={"rows": 8}),
                              help_text="The first line becomes the title.")  # fmt: skip
    tags = forms.CharField(required=False, label="Tags")


class BookmarkForm(forms.Form):
    url = forms.CharField(label="URL", max_length=2048, widget=forms.URLInput(
        attrs={"placeholder": "https://…", "inputmode": "url"}))  # fmt: skip
    tags = forms.CharField(required=False, label="Tags")


def title_from(content: str) -> str:
    """A quick note's title: its first non-blank line, Markdown heading marks dropped."""
    for line in content.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"
    return ""


@require_http_methods(["GET", "POST"])
@web.library_view
def new_page(request: HttpRequest) -> HttpResponse:
    """GET: the quick-note and save-a-link forms; POST (``kind``): save one of them."""
    note, bookmark = NoteForm(prefix="note"), BookmarkForm(prefix="bookmark")
    if request.method == "POST":
        if request.POST.get("kind") == "bookmark":
            bookmark = BookmarkForm(request.POST, prefix="bookmark")
            if bookmark.is_valid():
                return _save_bookmark(request, bookmark)
        else:
            note = NoteForm(request.POST, prefix="note")
            if note.is_valid():
                return _save_note(request, note)
    status = 400 if request.method == "POST" else 200
    return render(request, "library/new.html", {"note": note, "bookmark": bookmark}, status=status)


def _save_note(request: HttpRequest, form: NoteForm) -> HttpResponse:
    content = _same_newlines(form.cleaned_data["content"], None)
    data = {"title": title_from(content) or None, "content": content,
            "tags": split_tags(form.cleaned_data["tags"])}  # fmt: skip
    try:
        note = services.create_item(owner=web.owner_of(request), model=Note,
                                    data=services.item_fields(data), actor=web.ACTOR)  # fmt: skip
    except ValidationFailed as error:
        _field_errors(form, _on_content(error))
        return render(request, "library/new.html", {"note": form, "bookmark":
                      BookmarkForm(prefix="bookmark")}, status=400)  # fmt: skip
    return web.done(request, "Note saved.", web.item_path(note))


def _on_content(error: ValidationFailed) -> ValidationFailed:
    # A quick note has no title field: a title error is about its first line.
    fields = error.extra.get("fields")
    if isinstance(fields, dict) and "title" in fields:
        fields = {**fields, "content": [f"First line: {m}" for m in fields.pop("title")]}
        return ValidationFailed(fields, error.message)
    return error


def _save_bookmark(request: HttpRequest, form: BookmarkForm) -> HttpResponse:
    owner = web.owner_of(request)
    data = {"url": form.cleaned_data["url"].strip(), "tags": split_tags(form.cleaned_data["tags"])}
    try:
        bookmark = services.create_item(owner=owner, model=Bookmark,
                                        data=services.item_fields(data), actor=web.ACTOR)  # fmt: skip
    except UrlConflict as error:
        existing = error.extra.get("existing_id")
        if existing:
            to = reverse("library-item", args=["bookmark", existing])
            return web.done(request, "You saved this link before; here it is.", to)
        form.add_error("url", error.message)
    except ValidationFailed as error:
        _field_errors(form, error)
    except TiddlyError as error:
        form.add_error("url", error.message)
    else:
        return web.done(request, "Link saved. Its page is being captured in the background.",
                        web.item_path(bookmark))  # fmt: skip
    return render(request, "library/new.html", {"note": NoteForm(prefix="note"),
                  "bookmark": form}, status=400)  # fmt: skip
