"""``/library/``: every signed-in person's own items in the browser (SPEC §9, Round 4).

Plain Django views and templates, server-rendered, calling the same queries and services as REST
and MCP (``content.queries``, ``content.services``, the search of ``/api/search/``). Every
action is a form (POST, CSRF, then a redirect); no page needs JavaScript. ``web`` holds what
every page shares: sign-in, the owner's item or a 404, and the headers (a strict CSP).
"""
