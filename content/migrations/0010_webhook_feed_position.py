"""Webhooks follow the change feed: each keeps the feed position its deliveries are made through.

Existing webhooks had their deliveries made in each write's transaction, so every change already
logged is behind them: they start at the newest change.
"""

from typing import Any

from django.db import migrations, models


def start_at_the_newest_change(apps: Any, schema_editor: Any) -> None:
    change = apps.get_model("content", "Change")
    webhook = apps.get_model("content", "Webhook")
    newest = change.objects.order_by("-xid", "-id").values_list("xid", "id").first()
    if newest is not None:
        webhook.objects.update(fed_xid=newest[0], fed_change_id=newest[1])


class Migration(migrations.Migration):
    dependencies = [
        ("content", "0009_searchchunk_preview"),
    ]

    operations = [
        migrations.AddField(
            model_name="webhook",
            name="fed_change_id",
            field=models.BigIntegerField(default=0, editable=False),
        ),
        migrations.AddField(
            model_name="webhook",
            name="fed_xid",
            field=models.BigIntegerField(default=0, editable=False),
        ),
        migrations.RunPython(start_at_the_newest_change, migrations.RunPython.noop),
    ]
