"""PostgreSQL: a stored tsvector of the short fields, which hybrid search's keyword leg ranks by
(see ``content.dbops.search_head_sql``)."""

from django.db import migrations

from content.dbops import RunPostgresSQL, search_head_sql


class Migration(migrations.Migration):
    dependencies = [("content", "0011_sqlite_content_opening")]
    operations = [
        RunPostgresSQL(*search_head_sql("content_note")),
        RunPostgresSQL(*search_head_sql("content_bookmark", "url")),
    ]
