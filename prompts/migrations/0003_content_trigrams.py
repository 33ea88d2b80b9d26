from django.db import migrations

from content.dbops import RunPostgresSQL, content_trigram_sql


class Migration(migrations.Migration):
    dependencies = [("prompts", "0002_postgres_full_text_search")]
    operations = [RunPostgresSQL(*content_trigram_sql("prompts_prompt"))]
