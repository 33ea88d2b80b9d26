"""factory_boy factories for items and tags.

Factories write rows directly (no services, so no history): they set up state for API tests. Pass
``tags=["a", "b"]`` to attach the owner's tags (created on demand).
"""

from __future__ import annotations

from typing import Any

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone

from content.models import Bookmark, Note, Tag
from prompts.models import Prompt


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")


class TagFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Tag
        django_get_or_create = ("owner", "name")

    owner = factory.SubFactory(UserFactory)
    name = factory.Sequence(lambda n: f"tag-{n}")


class _ItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        abstract = True

    owner = factory.SubFactory(UserFactory)
    title = factory.Sequence(lambda n: f"Item {n}")
    description = None
    content = None

    @factory.post_generation
    def tags(self, create: bool, names: list[str] | None, **kwargs: Any) -> None:
        if create and names:
            self.tags.set([TagFactory(owner=self.owner, name=name) for name in names])

    @classmethod
    def _create(cls, model_class: Any, *args: Any, **kwargs: Any) -> Any:
        # created_at/updated_at/last_used_at are editable=False defaults; keep them consistent.
        now = kwargs.pop("now", None) or timezone.now()
        for field in ("created_at", "updated_at", "last_used_at"):
            kwargs.setdefault(field, now)
        return super()._create(model_class, *args, **kwargs)


class NoteFactory(_ItemFactory):
    class Meta:
        model = Note
        skip_postgeneration_save = True

    content = "Some note text."


class BookmarkFactory(_ItemFactory):
    class Meta:
        model = Bookmark
        skip_postgeneration_save = True

    url = factory.Sequence(lambda n: f"https://example.com/page-{n}")


class PromptFactory(_ItemFactory):
    class Meta:
        model = Prompt
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"prompt-{n}")
    content = "Hello {{ who }}!"
    arguments = factory.LazyFunction(
        lambda: [{"name": "who", "description": "Whom to greet", "required": True}]
    )


FACTORIES = {"note": NoteFactory, "bookmark": BookmarkFactory, "prompt": PromptFactory}
