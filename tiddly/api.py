"""/api/tokens/: people manage their API tokens from a signed-in (session) browser."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import permissions, serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from tiddly.errors import NotFound
from tiddly.models import ApiToken
from tiddly.schema import errors
from tiddly.scopes import ALL_SCOPES, scope_string
from tiddly.serializers import StrictSerializer, StringField


class SessionOnly(permissions.BasePermission):
    message = (
        "API tokens cannot manage API tokens. Sign in to the admin (session) and use this "
        "endpoint from the browser, or run `manage.py create_token`."
    )

    def has_permission(self, request: Request, view: Any) -> bool:
        return request.user.is_authenticated and getattr(request.auth, "kind", None) == "session"


class TokenOut(serializers.ModelSerializer):
    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "scopes", "created_at", "last_used_at", "expires_at"]

    scopes = serializers.SerializerMethodField()

    def get_scopes(self, token: ApiToken) -> list[str]:
        return token.scopes.split()


class TokenCreatedOut(TokenOut):
    token = serializers.CharField(
        source="plaintext", help_text="The plaintext token. Shown only this once."
    )

    class Meta(TokenOut.Meta):
        fields = [*TokenOut.Meta.fields, "token"]


class TokenCreateIn(StrictSerializer):
    name = StringField(max_length=100)
    expires_in_days = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=3650
    )
    scopes = serializers.MultipleChoiceField(
        choices=ALL_SCOPES,
        required=False,
        allow_empty=False,
        help_text="What the token may do (SPEC §8.1); default all four.",
    )


class TokenRenameIn(StrictSerializer):
    name = StringField(max_length=100)


@extend_schema_view(
    list=extend_schema(
        summary="List your API tokens", responses={200: TokenOut(many=True), **errors(403)}
    ),
    create=extend_schema(
        summary="Create an API token",
        request=TokenCreateIn,
        responses={201: TokenCreatedOut, **errors(400, 403)},
    ),
    partial_update=extend_schema(
        summary="Rename an API token",
        request=TokenRenameIn,
        responses={200: TokenOut, **errors(400, 403, 404)},
    ),
    destroy=extend_schema(summary="Revoke an API token", responses={204: None, **errors(403, 404)}),
)
class TokenViewSet(viewsets.GenericViewSet):
    permission_classes = [SessionOnly]
    serializer_class = TokenOut
    lookup_value_regex = "[^/]+"

    def get_queryset(self) -> Any:
        return ApiToken.objects.filter(owner_id=self.request.user.pk)

    def get_object(self) -> ApiToken:
        token = self.get_queryset().filter(pk=_uuid_or_none(self.kwargs["pk"])).first()
        if token is None:
            raise NotFound("No API token with that id was found.")
        return token

    def list(self, request: Request) -> Response:
        return Response(TokenOut(self.get_queryset(), many=True).data)

    def create(self, request: Request) -> Response:
        data = TokenCreateIn(data=request.data)
        data.is_valid(raise_exception=True)
        days = data.validated_data.get("expires_in_days")
        expires = timezone.now() + timedelta(days=days) if days else None
        token, _ = ApiToken.issue(
            owner=request.user,
            name=data.validated_data["name"].strip(),
            expires_at=expires,
            scopes=scope_string(data.validated_data.get("scopes", ALL_SCOPES)),
        )
        return Response(TokenCreatedOut(token).data, status=status.HTTP_201_CREATED)

    def partial_update(self, request: Request, pk: str) -> Response:
        token = self.get_object()
        data = TokenRenameIn(data=request.data)
        data.is_valid(raise_exception=True)
        token.name = data.validated_data["name"].strip()
        token.save(update_fields=["name"])
        return Response(TokenOut(token).data)

    def destroy(self, request: Request, pk: str) -> Response:
        self.get_object().delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


def _uuid_or_none(value: str) -> str | None:
    import uuid

    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None
