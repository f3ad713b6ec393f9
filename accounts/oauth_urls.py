"""OAuth provider, sign-in and connected-apps pages, at Cal.com's exact paths (docs/oauth.md).

Mounted at the site root. DOT's own `oauth2_provider.urls` is deliberately not included: it
would let any signed-in user register OAuth clients, and here only the operator does that.
"""

from django.urls import path

from accounts.oauth import views

urlpatterns = [
    path("auth/oauth2/authorize", views.AuthorizeView.as_view(), name="oauth-authorize"),
    path("api/auth/oauth/token", views.token, name="oauth-token"),
    path("api/auth/oauth/refreshToken", views.refresh_token, name="oauth-refresh-token"),
    path("api/auth/oauth/me", views.OAuthMeView.as_view(), name="oauth-me"),
    path("api/auth/oauth/revoke", views.revoke, name="oauth-revoke"),
    path("api/auth/oauth/introspect", views.introspect, name="oauth-introspect"),
    path(".well-known/oauth-authorization-server", views.metadata, name="oauth-metadata"),
    # The same endpoints where generic OAuth clients and self-hosted integrations look first
    # (docs/oauth.md, "Endpoints"); the metadata above names the paths of Cal.com's.
    path("oauth/authorize", views.AuthorizeView.as_view(), name="oauth-authorize-alias"),
    path("api/auth/oauth/authorize", views.AuthorizeView.as_view(), name="oauth-authorize-api-alias"),
    path("oauth/token", views.token, name="oauth-token-alias"),
    path("oauth/revoke", views.revoke, name="oauth-revoke-alias"),
    path("oauth/introspect", views.introspect, name="oauth-introspect-alias"),
    path("auth/login", views.login, name="login"),
    path("auth/logout", views.logout, name="logout"),
    path("auth/apps", views.connected_apps, name="connected-apps"),
    path("auth/apps/<int:application_id>/revoke", views.connected_app_revoke, name="connected-app-revoke"),
]
