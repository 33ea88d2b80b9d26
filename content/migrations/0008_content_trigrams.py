from django.db import migrations

from content.dbops import RunPostgresSQL, content_trigram_sql


class Migration(migrations.Migration):
    dependencies = [("content", "0007_search_vectors")]
    operations = [
        RunPostgresSQL(*content_trigram_sql("content_note")),
        RunPostgresSQL(*content_trigram_sql("content_bookmark")),
    ]
