"""SQLite: a prompt's ``content`` becomes the last column, and its short fields and content's
opening get an FTS5 trigram index (see content/migrations/0011)."""

from django.db import migrations

from content.dbops import RunSQLiteSQL, sqlite_opening_sql


class Migration(migrations.Migration):
    dependencies = [("prompts", "0003_content_trigrams")]
    operations = [
        RunSQLiteSQL(*sqlite_opening_sql("prompts_prompt", ("title", "description", "name")))
    ]
