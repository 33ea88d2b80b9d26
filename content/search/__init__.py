"""Finding things: keyword, meaning and hybrid search (SPEC §3.3, §16), in layers of its own.

``indexing`` (what gets embedded, the task that does it, ``reindex``), ``ranking`` (the three
modes, fused; the entry point of ``/api/search/``, list ``q`` with a mode, MCP ``search_items``)
and ``related`` (items near an item) sit on ``semantic`` (the in-memory per-owner vector index)
and ``typos`` (near words), which sit on ``embeddings`` (the providers), ``marks`` (the write
path's marks of items to index) and ``pieces`` (PostgreSQL: the word pieces of a long content,
written with it). Other modules import these public functions, never a
``_private`` one.
"""
