"""Errors of browser sessions; they join the :mod:`service.errors` tree.

::

    ShortlistError
    └── CsrfFailed (403)
"""

from __future__ import annotations

from service.errors import ShortlistError


class CsrfFailed(ShortlistError):
    """This change came without the session's X-CSRF-Token header (or from another site); reload the page and try again."""

    status = 403
    code = "csrf_failed"
