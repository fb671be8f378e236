"""The project panel: one server-rendered page, its static assets and browser sessions.

The page's data comes from the same REST API every other client uses; this
package only adds what a browser needs on top of it: a sign-in that turns an
API token into an HttpOnly session cookie (:mod:`service.panel.session_cookie`,
:mod:`service.panel.session_routes`), CSRF protection for cookie-authenticated
writes (:mod:`service.panel.session_auth`), and the page with its security
headers (:mod:`service.panel.views`, :mod:`service.panel.security_headers`).

Nothing is re-exported here: :mod:`service.http.auth` imports the session modules,
and importing the routes from this package's ``__init__`` would be circular.
"""
