"""The admin names webhook deliveries in the plural properly ("Webhook deliveries"); no SQL."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("content", "0017_postgres_words"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="webhookdelivery",
            options={"ordering": ["-created_at"], "verbose_name_plural": "webhook deliveries"},
        ),
    ]
