"""SQLite: the content's lowercased opening as an indexed virtual column, as PostgreSQL has had
since 0008 (there stored, with a trigram index): hybrid search's keyword leg and typo tolerance
search it without reading whole contents."""

from django.db import migrations

from content.dbops import RunSQLiteSQL, sqlite_opening_sql


class Migration(migrations.Migration):
    dependencies = [("content", "0010_webhook_feed_position")]
    operations = [
        RunSQLiteSQL(*sqlite_opening_sql("content_note")),
        RunSQLiteSQL(*sqlite_opening_sql("content_bookmark")),
    ]
