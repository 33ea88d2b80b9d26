"""Data portability (SPEC §14): import Netscape bookmark files and Tiddly JSON, export JSON,
Netscape and Markdown.

What the REST views, the admin and the management commands call:

- ``importer.import_items(owner=, stream=, size=, format=, on_conflict=, actor=, principal=,
  progress=)`` → ``ImportReport`` (``.as_dict()`` is the response body); raises
  ``InvalidImport`` (400 ``invalid_import`` with ``position``), ``FieldLimitExceeded`` (400) or
  ``Forbidden`` (a type the principal may not write) and then saves nothing.
- ``exporter.export_items(owner=, format=, types=, views=, ids=, progress=)`` → ``ExportFile``
  (``filename``, ``content_type``, ``chunks``: a lazy iterator of bytes);
  ``streaming.download(request, export)`` turns it into the streamed attachment.

Item types come from ``content.item_types``: what differs between them (own fields, unique
field, validation, scope area, whether the content exports as Markdown) is read from the model
classes. The format modules (``netscape``, ``tiddly_json``, ``markdown``) read and write files
and know nothing of requests or item types.
"""
