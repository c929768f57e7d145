"""Project error views (``handler400`` / ``handler404`` / ``handler500`` in ``config.urls``): under
``/api/`` the APIs' JSON error body ``{"code", "detail"}``, anywhere else (the admin) Django's own
pages."""

from django.http import JsonResponse
from django.views import defaults


def _is_api(request):
    return request.path.startswith("/api/")


def bad_request(request, exception=None):
    if _is_api(request):
        return JsonResponse({"code": "bad_request", "detail": "Bad request."}, status=400)
    return defaults.bad_request(request, exception)


def page_not_found(request, exception=None):
    if _is_api(request):
        return JsonResponse({"code": "not_found", "detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    if _is_api(request):
        return JsonResponse({"code": "server_error", "detail": "Server error."}, status=500)
    return defaults.server_error(request)
