"""The server-rendered pages outside the admin: public share links (``share``, SPEC §17.4) and
capture from anywhere (``capture``, SPEC §15), with the headers and throttle they share (``web``).
An entry point like ``api`` and ``admin``: it calls the services and queries below it.
"""
