from rest_framework.exceptions import NotAuthenticated
from rest_framework.permissions import BasePermission

from core.exceptions import InsufficientScope


class HasScope(BasePermission):
    """Every resource view declares `scopes = {"GET": "READ_X", "POST": "WRITE_X", …}`.

    Missing credentials are a 401; a credential without the method's scope is a 403 naming the
    scope. A method without a declared scope is refused, so a new view cannot be left open by
    forgetting to declare one.
    """

    def has_permission(self, request, view):
        if request.auth is None or request.user is None:
            raise NotAuthenticated("Authentication credentials were not provided.")
        scopes = getattr(view, "scopes", None) or {}
        method = "GET" if request.method in ("HEAD", "OPTIONS") else request.method
        needed = scopes.get(method)
        if needed is None:
            # No handler for the method: let DRF answer 405 instead of hiding it behind a 403.
            return not hasattr(view, request.method.lower())
        if needed not in request.auth.scopes:
            raise InsufficientScope(needed)
        return True
