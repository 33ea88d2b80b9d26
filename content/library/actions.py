"""The item page's buttons (SPEC §9): each a POST form that calls one service, then redirects
back (post/redirect/get) with what happened as a message. ``/library/<type>/<id>/<action>/``."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from content import queries, services
from content.library import web
from content.queries import ItemRef
from content.services import capture as capture_service
from content.services import relationships, sharing
from tiddly.errors import NotFound, TiddlyError, ValidationFailed

Action = Callable[[HttpRequest, Any, ItemRef], tuple[str, str | None]]
_LIBRARY_PATH = re.compile(r"/library/(?P<type>[a-z]+)/(?P<id>[0-9a-fA-F-]{36})/?")


def _archive(request: HttpRequest, owner: Any, ref: ItemRef) -> tuple[str, str | None]:
    services.archive_item(owner=owner, ref=ref, actor=web.ACTOR)
    return "Archived. It is listed under Archived now.", None


def _unarchive(request: HttpRequest, owner: Any, ref: ItemRef) -> tuple[str, str | None]:
    services.unarchive_item(owner=owner, ref=ref, actor=web.ACTOR)
    return "Back among your active items.", None


def _trash(request: HttpRequest, owner: Any, ref: ItemRef) -> tuple[str, str | None]:
    services.trash_item(owner=owner, ref=ref, actor=web.ACTOR)
    return "Moved to the trash. Restore it from there if that was a mistake.", None


def _restore(request: HttpRequest, owner: Any, ref: ItemRef) -> tuple[str, str | None]:
    services.restore_item(owner=owner, ref=ref, actor=web.ACTOR)
    return "Restored from the trash.", None


def _capture(request: HttpRequest, owner: Any, ref: ItemRef) -> tuple[str, str | None]:
    replace = request.POST.get("replace_content") == "1"
    capture_service.capture_again(owner=owner, ref=ref, replace_content=replace)
    return "Capture queued: the page is fetched in the background. Reload in a moment.", None


def _share(request: HttpRequest, owner: Any, ref: ItemRef) -> tuple[str, str | None]:
    origin = f"{request.scheme}://{request.get_host()}"
    sharing.share_item(owner=owner, ref=ref, origin=origin, actor=web.ACTOR)
    return "Shared: anyone with the link can read it.", None


def _unshare(request: HttpRequest, owner: Any, ref: ItemRef) -> tuple[str, str | None]:
    sharing.unshare_item(owner=owner, ref=ref, actor=web.ACTOR)
    return "No longer shared: the link stopped working.", None


def _add_tag(request: HttpRequest, owner: Any, ref: ItemRef) -> tuple[str, str | None]:
    """One suggested tag added to the item's tags (a whole-tags update, as the API's)."""
    tag = (request.POST.get("tag") or "").strip().lower()
    item = queries.get_owned(owner, ref)
    services.update_item(owner=owner, ref=ref, actor=web.ACTOR,
                         data=services.item_fields({"tags": [*item.tag_names(), tag]}))  # fmt: skip
    return f"Tagged “{tag}”.", None


def _link(request: HttpRequest, owner: Any, ref: ItemRef) -> tuple[str, str | None]:
    """Link to another of the person's items, named by type and id (the picker's and related
    items' buttons: another person's item is a 404) or by a pasted library address (a mistyped
    one is said on the page)."""
    target_type, target_id = request.POST.get("target_type", ""), request.POST.get("target_id", "")
    pasted = _LIBRARY_PATH.search(request.POST.get("target") or "")
    if pasted:
        target_type, target_id = pasted["type"], pasted["id"]
    if not target_type or not target_id:
        raise ValidationFailed({"target": ["Paste the library address of the item to link, "
                                           "e.g. /library/note/0190…/."]})  # fmt: skip
    source = relationships.End(ref.model.type_name, ref.pk)
    target = relationships.End.parse(target_type, target_id, "target")
    try:
        _, made = relationships.create_link(owner=owner, source=source, target=target,
                                            description=None, actor=web.ACTOR)  # fmt: skip
    except NotFound:
        if not pasted:
            raise
        raise ValidationFailed({"target": ["None of your items has that address."]}) from None
    return ("Linked." if made else "They were linked already."), None


def _unlink(request: HttpRequest, owner: Any, ref: ItemRef) -> tuple[str, str | None]:
    relationships.delete_link(owner=owner, link_id=request.POST.get("link_id"), actor=web.ACTOR)
    return "Link removed.", None


def _restore_version(request: HttpRequest, owner: Any, ref: ItemRef) -> tuple[str, str | None]:
    version = _int(request.POST.get("version"))
    replaced = _int(request.POST["current"]) if request.POST.get("current") else None
    item = services.restore_version(owner=owner, ref=ref, version=version, actor=web.ACTOR)
    query = f"?undo={replaced}" if replaced else ""
    return f"Version {version} restored.", web.item_path(item) + query


def _int(value: str | None) -> int:
    try:
        return int(value or "")
    except ValueError:
        raise ValidationFailed({"version": ["Pick a version number from the history."]}) from None


ACTIONS: dict[str, Action] = {
    "archive": _archive,
    "unarchive": _unarchive,
    "trash": _trash,
    "restore": _restore,
    "capture": _capture,
    "share": _share,
    "unshare": _unshare,
    "tag": _add_tag,
    "link": _link,
    "unlink": _unlink,
    "restore-version": _restore_version,
}


@require_POST
@web.library_view
def item_action(request: HttpRequest, type_name: str, pk: str, action: str) -> HttpResponse:
    run = ACTIONS.get(action)
    ref = web.ref_of(type_name, pk)
    if run is None:
        raise Http404(f"No action {action!r}.")
    owner = web.owner_of(request)
    home = web.back_to(request, reverse("library-item", args=[type_name, ref.pk]))
    queries.get_owned_head(owner, ref)  # another person's item: 404 before anything else
    try:
        message, to = run(request, owner, ref)
    except TiddlyError as error:
        if error.status_code == 404 and action != "unlink":
            raise
        return web.failed(request, error, home)
    return web.done(request, message, to or home)
