"""Chunk vectors keyed by their text's hash (SPEC §16 round 4), and every existing item marked for
indexing: items that exist when the search migrations run get indexed with no manual step (the
task workers' poller sees the marks), and items indexed before this migration are cut again with
the content-defined boundaries and get their hashes. Plain SQL, valid on SQLite and PostgreSQL."""

from django.db import migrations, models

# Table of each indexed item type (the historical names; no application code imported).
ITEM_TABLES = {"note": "content_note", "bookmark": "content_bookmark", "prompt": "prompts_prompt"}


def _mark_all(type_name: str, table: str) -> str:
    return (
        "INSERT INTO content_searchdirty (owner_id, item_type, item_id, marked_at) "
        f"SELECT t.owner_id, '{type_name}', t.id, CURRENT_TIMESTAMP FROM {table} t "
        "WHERE NOT EXISTS (SELECT 1 FROM content_searchdirty d "
        f"WHERE d.item_id = t.id AND d.item_type = '{type_name}')"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("content", "0013_webhook_reach"),
        ("prompts", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="searchchunk",
            name="text_hash",
            field=models.CharField(blank=True, default="", max_length=32),
        ),
        *(
            migrations.RunSQL(_mark_all(type_name, table), migrations.RunSQL.noop)
            for type_name, table in ITEM_TABLES.items()
        ),
    ]
