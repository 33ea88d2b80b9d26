from django.db import migrations

from content.dbops import RunPostgresSQL, search_vector_sql

forward, backward = search_vector_sql("prompts_prompt", "name")


class Migration(migrations.Migration):
    dependencies = [("prompts", "0001_initial")]
    operations = [RunPostgresSQL(forward, backward)]
