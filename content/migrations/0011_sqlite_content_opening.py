"""SQLite: ``content`` becomes the last column (reading the columns after a large content walked
its overflow pages), and an FTS5 trigram index of the short fields and the content's opening,
kept by triggers, serves hybrid search's keyword leg and typo tolerance as PostgreSQL's trigram
index has since 0008. See ``content.dbops.sqlite_opening_sql``."""

from django.db import migrations

from content.dbops import RunSQLiteSQL, sqlite_opening_sql


class Migration(migrations.Migration):
    dependencies = [("content", "0010_webhook_feed_position")]
    operations = [
        RunSQLiteSQL(*sqlite_opening_sql("content_note", ("title", "description"))),
        RunSQLiteSQL(*sqlite_opening_sql("content_bookmark", ("title", "description", "url"))),
    ]
