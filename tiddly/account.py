"""/account/tokens/: any signed-in person manages their own API tokens (SPEC §8).

The admin serves staff; this page serves everyone else (and staff too): list your tokens,
create one (its plaintext is on the answering page only, never stored or redirected through a
message), revoke one. Server-rendered in the admin's look, CSRF-protected; anonymous visitors
are sent to the login page (``LOGIN_URL``, /oauth/login) with ``next``. Another person's token
is a 404, like a token that does not exist.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import path, reverse
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.cache import never_cache

from tiddly.admin import ScopesField
from tiddly.models import ApiToken
from tiddly.scopes import ALL_SCOPES

MAX_NAME = ApiToken._meta.get_field("name").max_length or 100


class TokenForm(forms.Form):
    name = forms.CharField(max_length=MAX_NAME, strip=True)
    scopes = ScopesField(label="Scopes", initial=list(ALL_SCOPES))
    expires_in_days = forms.IntegerField(
        label="Expires in (days)",
        required=False,
        min_value=1,
        max_value=3650,
        help_text="Leave empty for a token that does not expire.",
    )


@method_decorator(never_cache, name="dispatch")
class TokensView(LoginRequiredMixin, View):
    http_method_names = ["get", "post"]

    def get(self, request: HttpRequest) -> HttpResponse:
        return self._page(request, TokenForm())

    def post(self, request: HttpRequest) -> HttpResponse:
        form = TokenForm(request.POST)
        if not form.is_valid():
            return self._page(request, form, status=400)
        data = form.cleaned_data
        days = data.get("expires_in_days")
        token, plaintext = ApiToken.issue(
            owner=request.user,
            name=data["name"],
            expires_at=timezone.now() + timedelta(days=days) if days else None,
            scopes=data["scopes"],
        )
        return self._page(request, TokenForm(), created=token, plaintext=plaintext, status=201)

    def _page(self, request: HttpRequest, form: TokenForm, status: int = 200, **extra: Any) -> Any:
        context = {
            **admin.site.each_context(request),
            "title": "Your API tokens",
            "tokens": ApiToken.objects.filter(owner_id=request.user.pk),
            "form": form,
            **extra,
        }
        return render(request, "account/tokens.html", context, status=status)


@method_decorator(never_cache, name="dispatch")
class RevokeTokenView(LoginRequiredMixin, View):
    http_method_names = ["post"]

    def post(self, request: HttpRequest, token_id: str) -> HttpResponse:
        try:
            pk = uuid.UUID(token_id)
        except ValueError:
            raise Http404("No such token.") from None
        deleted, _ = ApiToken.objects.filter(pk=pk, owner_id=request.user.pk).delete()
        if not deleted:
            raise Http404("No such token.")
        return HttpResponseRedirect(reverse("account-tokens"))


urlpatterns = [
    path("account/tokens/", TokensView.as_view(), name="account-tokens"),
    path(
        "account/tokens/<str:token_id>/revoke/",
        RevokeTokenView.as_view(),
        name="account-token-revoke",
    ),
]
