"""Back office for people, teams, API keys and OAuth clients.

Every write goes through the services the API uses (users, teams, memberships, API keys:
`accounts.services`; OAuth clients: `accounts.oauth.services`, which `createoauthclient` also uses),
so the same rules hold here. Staff edit teams and memberships without the API's role rules
(`actor=None`), but never so that a team loses its last accepted OWNER: the forms say so next to the
field (`accounts.services.membership_owner_loss`), and the services refuse it in any case.
"""

from django.apps import apps
from django.conf import settings
from django.contrib import admin
from django.contrib.auth.models import Group
from django.utils.functional import lazy

from accounts.throttle import ThrottledAdminAuthenticationForm

# The admin's sign-in goes through the same throttle as /auth/login (accounts.throttle).
admin.site.login_form = ThrottledAdminAuthenticationForm

# The back office carries the service's name, and "View site" leads to the API reference (the
# service has no public website of its own).
admin.site.site_header = admin.site.site_title = lazy(lambda: f"{settings.SERVICE_NAME} back office", str)()
admin.site.index_title = "Operations"
admin.site.site_url = "/v1/docs"
# The changelists (payments, deliveries) need the width more than a second list of models: the index
# and the breadcrumbs already lead everywhere.
admin.site.enable_nav_sidebar = False

# Staff rights come from `is_staff` / `is_superuser` and API rights from roles and scopes; groups
# are never consulted, so the admin does not offer them (docs/operations.md).
admin.site.unregister(Group)
# The section of django-oauth-toolkit's models is named for what it is to the operator.
apps.get_app_config("oauth2_provider").verbose_name = "OAuth 2.0 provider"

# Each concern registers its models: users, teams and memberships, API keys, OAuth clients.
from accounts.admin import api_keys, oauth_clients, teams, users  # noqa: E402, F401
