import factory

from core.models import App


class AppFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = App
        django_get_or_create = ("slug",)

    slug = "stripe"
    name = "Stripe"
    categories = factory.LazyFunction(lambda: ["payment"])
