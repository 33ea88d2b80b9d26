from __future__ import annotations

from rest_framework.routers import SimpleRouter

from prompts.api.views import PromptViewSet

router = SimpleRouter()
router.register("prompts", PromptViewSet, basename="prompt")

urlpatterns = router.urls
