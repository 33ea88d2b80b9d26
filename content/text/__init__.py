"""The text core: pure functions on strings, no Django (and no other ``content`` module).

``lines`` counts lines and cuts line windows (partial reads), ``search`` finds text within an
item, ``replace`` (with its matching levels in ``replace_levels``) plans str-replace edits, and
``diff`` is the one unified diff, shown by dry runs and by history alike. Everything is linear in
the text and scans in C, so a 10 MB item stays cheap; tests can run it without a database.
"""
