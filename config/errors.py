"""Project error views (``handler400`` / ``handler404`` / ``handler500`` in ``config.urls``): under
``/api/`` the APIs' JSON error body ``{"code", "detail"}``, anywhere else (the admin) Django's own
pages; and ``refuse_unknown_hosts``, the first middleware, for a request whose ``Host`` is not in
``ALLOWED_HOSTS``."""

import logging

from django.core.exceptions import DisallowedHost
from django.http import JsonResponse
from django.urls import Resolver404, resolve
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt


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


@csrf_exempt  # API clients send tokens, not the admin's CSRF cookie: a POST gets the JSON 404 too
def api_path_not_found(request, rest=""):
    """The last route under ``/api/``: a path no API route takes answers the JSON 404 whatever
    ``DEBUG`` says, and is never redirected to the path with a slash added (``APPEND_SLASH``: a
    redirected POST comes back as a GET, and a dispute would be lost); the detail names that path
    when it exists."""
    detail = "Not found."
    if not request.path.endswith("/"):
        try:
            if resolve(request.path + "/").func is not api_path_not_found:
                detail = f"Not found. This endpoint is {request.path}/ (with the trailing slash)."
        except Resolver404:
            pass
    return JsonResponse({"code": "not_found", "detail": detail}, status=404)


def server_error(request):
    if _is_api(request):
        return JsonResponse({"code": "server_error", "detail": "Server error."}, status=500)
    return defaults.server_error(request)


#: The sentence of ``host_refused``: the problem, never the hosts served.
HOST_REFUSED = ("the request's Host header names a host this server does not answer: "
                "send the host name of the platform's URL (the server's ALLOWED_HOSTS setting)")


def refuse_unknown_hosts(get_response):
    """Middleware (the first): a request under ``/api/`` whose ``Host`` is not in ``ALLOWED_HOSTS``
    is answered 400 ``host_refused``, JSON, DEBUG or not, and logged as Django logs it
    (``django.security.DisallowedHost``); anywhere else Django's answer stands (its 400 page)."""

    def middleware(request):
        if _is_api(request):
            try:
                request.get_host()
            except DisallowedHost as refused:
                logging.getLogger("django.security.DisallowedHost").error(
                    str(refused), extra={"status_code": 400, "request": request})
                return JsonResponse({"code": "host_refused", "detail": HOST_REFUSED}, status=400)
        return get_response(request)

    return middleware
