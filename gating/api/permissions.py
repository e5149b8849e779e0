from rest_framework.permissions import SAFE_METHODS, BasePermission


def require_perm(codename: str, *, unsafe_only: bool = False) -> type[BasePermission]:
    """A DRF permission class for one Django permission (or only for unsafe methods)."""

    class _HasPerm(BasePermission):
        message = f"Your role lacks the permission {codename}."

        def has_permission(self, request, view):
            if unsafe_only and request.method in SAFE_METHODS:
                return True
            return bool(request.user and request.user.has_perm(codename))

    _HasPerm.__name__ = f"Has_{codename.replace('.', '_')}"
    return _HasPerm
