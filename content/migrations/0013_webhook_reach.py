"""Webhooks keep the item types their creating token could read (SPEC §17.2, issue 29).

Which token made an existing webhook was never recorded. A webhook that named its types keeps
exactly those; one that asked for every type keeps every type there was (bookmark, note, prompt),
so nothing it delivered stops — and from now on only a caller who reads all three (a session or
a full token) may see, change or delete it, the safe side for a webhook whose maker is unknown.
"""

from typing import Any

from django.db import migrations, models

EVERY_TYPE = ["bookmark", "note", "prompt"]  # the types of this migration's time


def reach_from_types(apps: Any, schema_editor: Any) -> None:
    webhook = apps.get_model("content", "Webhook")
    for hook in webhook.objects.all().only("pk", "types"):
        reach = [name for name in EVERY_TYPE if name in (hook.types or [])] or EVERY_TYPE
        webhook.objects.filter(pk=hook.pk).update(reach=reach)


class Migration(migrations.Migration):
    dependencies = [
        ("content", "0012_postgres_search_head"),
    ]

    operations = [
        migrations.AddField(
            model_name="webhook",
            name="reach",
            field=models.JSONField(blank=True, default=list, editable=False),
        ),
        migrations.RunPython(reach_from_types, migrations.RunPython.noop),
    ]
