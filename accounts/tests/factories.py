import secrets
from datetime import timedelta

import factory
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, RefreshToken

from accounts.models import ApiKey, Membership, MembershipRole, OAuthClientProfile, Team, User
from accounts.services import api_key_create
from core.scopes import all_scopes

PASSWORD = "correct horse battery staple"  # every UserFactory user's


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    name = factory.Faker("name")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    time_zone = "Europe/Berlin"
    password = factory.django.Password(PASSWORD)


class TeamFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Team

    name = factory.Sequence(lambda n: f"Team {n}")
    slug = factory.Sequence(lambda n: f"team-{n}")


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    team = factory.SubFactory(TeamFactory)
    accepted = True
    role = MembershipRole.MEMBER


class ApiKeyFactory(factory.django.DjangoModelFactory):
    """`ApiKeyFactory()` returns the model with the clear-text key on `.raw_key`."""

    class Meta:
        model = ApiKey

    user = factory.SubFactory(UserFactory)
    note = "test key"
    expires_at = None

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        api_key, raw_key = api_key_create(**kwargs)
        api_key.raw_key = raw_key
        return api_key


class ApplicationFactory(factory.django.DjangoModelFactory):
    """A confidential client; `.raw_client_secret` holds the secret before DOT hashed it."""

    class Meta:
        model = Application
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"App {n}")
    client_type = Application.CLIENT_CONFIDENTIAL
    authorization_grant_type = Application.GRANT_AUTHORIZATION_CODE
    redirect_uris = "http://127.0.0.1:8765/callback"
    client_secret = factory.LazyFunction(lambda: secrets.token_urlsafe(32))
    skip_authorization = False
    algorithm = ""

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        raw_secret = kwargs["client_secret"]
        application = super()._create(model_class, *args, **kwargs)
        application.raw_client_secret = raw_secret
        return application

    @factory.post_generation
    def profile(application, create, extracted, **kwargs):
        if create:
            OAuthClientProfileFactory(application=application, **kwargs)


class OAuthClientProfileFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = OAuthClientProfile

    application = factory.SubFactory(ApplicationFactory, profile=None)
    logo = "https://example.com/logo.png"
    app_link = "https://example.com"
    scope_ceiling = factory.LazyFunction(lambda: sorted(all_scopes()))
    suspended = False


class AccessTokenFactory(factory.django.DjangoModelFactory):
    """An OAuth access token; `.raw_token` is what a client sends (DOT stores only its checksum)."""

    class Meta:
        model = AccessToken
        skip_postgeneration_save = True

    user = factory.SubFactory(UserFactory)
    application = factory.SubFactory(ApplicationFactory)
    token = factory.LazyFunction(lambda: secrets.token_urlsafe(30))
    expires = factory.LazyFunction(lambda: timezone.now() + timedelta(minutes=30))
    scope = "READ_PROFILE"

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        raw_token = kwargs["token"]
        access_token = super()._create(model_class, *args, **kwargs)
        access_token.raw_token = raw_token
        return access_token


class RefreshTokenFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = RefreshToken

    user = factory.SelfAttribute("access_token.user")
    application = factory.SelfAttribute("access_token.application")
    access_token = factory.SubFactory(AccessTokenFactory)
    token = factory.LazyFunction(lambda: secrets.token_urlsafe(30))
