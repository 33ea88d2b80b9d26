from django.db import migrations

from content.dbops import RunPostgresSQL, search_vector_sql


def _ops():
    ops = []
    for table, extra in (("content_note", None), ("content_bookmark", "url")):
        forward, backward = search_vector_sql(table, extra)
        ops.append(RunPostgresSQL(forward, backward))
    ops.append(
        RunPostgresSQL(
            'ALTER TABLE "content_itemversion" ALTER COLUMN content_snapshot SET COMPRESSION lz4;',
            'ALTER TABLE "content_itemversion" ALTER COLUMN content_snapshot SET COMPRESSION DEFAULT;',
        )
    )
    return ops


class Migration(migrations.Migration):
    dependencies = [("content", "0001_initial")]
    operations = _ops()
