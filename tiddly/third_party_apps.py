"""Third-party apps under names people understand in the admin (SPEC §9): "OAuth applications"
instead of "Django OAuth Toolkit", "Background tasks" instead of "Tasks Database Backend".

Their own module: an ``apps.py`` with several ``AppConfig`` subclasses would stop Django from
picking ``TiddlyConfig`` on its own.
"""

from __future__ import annotations

from django_tasks_db.apps import TasksAppConfig
from oauth2_provider.apps import DOTConfig


class OAuthApplicationsConfig(DOTConfig):
    verbose_name = "OAuth applications"


class BackgroundTasksConfig(TasksAppConfig):
    verbose_name = "Background tasks"
