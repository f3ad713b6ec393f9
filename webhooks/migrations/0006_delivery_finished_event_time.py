from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # The delivery log may already be large: build the index without blocking writes.
    atomic = False

    dependencies = [
        ("webhooks", "0005_delivery_isolation_breaker_rate_limit"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="webhookdelivery",
            index=models.Index(
                condition=models.Q(("status__in", ["succeeded", "failed", "cancelled"])),
                fields=["event_created_at"],
                name="delivery_finished_event_time",
            ),
        ),
    ]
