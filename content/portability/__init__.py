"""Data portability (SPEC §14): import Netscape bookmark files and Tiddly JSON, export JSON,
Netscape and Markdown.

What the REST views, the admin and the management commands call:

- ``importer.import_items(owner=, stream=, size=, format=, on_conflict=, actor=, progress=)``
  → ``ImportReport`` (``.as_dict()`` is the response body); raises ``InvalidImport`` (400
  ``invalid_import`` with ``position``) or ``FieldLimitExceeded`` (400) and then saves nothing.
- ``exporter.export_items(owner=, format=, types=, views=, progress=)`` → ``ExportFile``
  (``filename``, ``content_type``, ``chunks``: a lazy iterator of bytes).

The format modules (``netscape``, ``tiddly_json``, ``markdown``) read and write files and know
nothing of requests.
"""
