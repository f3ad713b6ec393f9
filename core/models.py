from django.db import models


class App(models.Model):
    """An installed integration (payment provider, webhook app). Its slug is its public id."""

    slug = models.SlugField(primary_key=True, max_length=100)
    name = models.CharField(max_length=200)
    categories = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.name
