from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # The delivery log may already be large: a column with a constant default is added without a
    # rewrite, and the (small, partial) index is built without blocking writes.
    atomic = False

    dependencies = [
        ("webhooks", "0006_delivery_finished_event_time"),
    ]

    operations = [
        migrations.AddField(
            model_name="webhookdelivery",
            name="in_sequence",
            field=models.BooleanField(db_default=False, default=False),
        ),
        AddIndexConcurrently(
            model_name="webhookdelivery",
            index=models.Index(
                condition=models.Q(("in_sequence", True)),
                fields=["webhook", "id"],
                name="delivery_in_sequence",
            ),
        ),
    ]
