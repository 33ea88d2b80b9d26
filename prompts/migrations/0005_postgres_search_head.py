"""PostgreSQL: a stored tsvector of a prompt's short fields (see content/migrations/0012)."""

from django.db import migrations

from content.dbops import RunPostgresSQL, search_head_sql


class Migration(migrations.Migration):
    dependencies = [("prompts", "0004_sqlite_content_opening")]
    operations = [RunPostgresSQL(*search_head_sql("prompts_prompt", "name"))]
