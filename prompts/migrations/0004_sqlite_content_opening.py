"""SQLite: the prompt content's lowercased opening as an indexed virtual column (see
content/migrations/0011)."""

from django.db import migrations

from content.dbops import RunSQLiteSQL, sqlite_opening_sql


class Migration(migrations.Migration):
    dependencies = [("prompts", "0003_content_trigrams")]
    operations = [RunSQLiteSQL(*sqlite_opening_sql("prompts_prompt"))]
