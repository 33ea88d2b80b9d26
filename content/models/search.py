"""What finding by meaning stores (SPEC §16): chunk vectors, the items waiting to be indexed and a
per-owner change log from which each process updates its in-memory index in place.

Vectors are int8-quantised (one byte per dimension plus a float scale): 256 bytes for the local
model instead of 1 KB of float32, so ~380 000 chunks take ~100 MB in a process, and cosine
rankings lose well under 1 % (each row is scaled to its own largest component).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

#: Characters of a content chunk's opening kept with its vector (``SearchChunk.preview``).
CHUNK_PREVIEW_CHARS = 350


class SearchChunk(models.Model):
    """One embedded piece of an item: the header (title, description, tags, url/name) or a
    content chunk with its 1-based inclusive line range."""

    id = models.BigAutoField(primary_key=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    item_type = models.CharField(max_length=10)
    item_id = models.UUIDField()
    seq = models.PositiveIntegerField()
    field = models.CharField(max_length=8)
    start_line = models.PositiveIntegerField(null=True)
    end_line = models.PositiveIntegerField(null=True)
    # Where the chunk starts in the content (0-based): a snippet is cut in SQL, never by loading
    # a 10 MB note.
    start_char = models.PositiveIntegerField(default=0)
    # The chunk's first CHUNK_PREVIEW_CHARS characters: a result's snippet without reading the
    # content at all (on PostgreSQL a deep offset of a large content decompresses all before it).
    # Empty for chunks indexed before it existed and for headers: the snippet is cut from the item.
    preview = models.TextField(default="", blank=True)
    # Vectors of different models are never compared: searches load only the current model's.
    model = models.CharField(max_length=200)
    # BLAKE2b-128 (hex) of the embedded text: with ``model`` the key of the vector, so re-indexing
    # an edited item embeds only its changed chunks. Empty on rows indexed before it existed.
    text_hash = models.CharField(max_length=32, default="", blank=True)
    vector = models.BinaryField()
    scale = models.FloatField()

    class Meta:
        indexes = [
            models.Index(fields=["owner", "model"], name="searchchunk_owner_model"),
            models.Index(fields=["item_id", "item_type"], name="searchchunk_item"),
        ]

    def __str__(self) -> str:
        return f"{self.item_type} {self.item_id} #{self.seq}"


class SearchDirty(models.Model):
    """An item whose vectors are out of date; the indexing task removes the row once done (unless
    the item was marked again meanwhile: ``marked_at`` moved on)."""

    id = models.BigAutoField(primary_key=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    item_type = models.CharField(max_length=10)
    item_id = models.UUIDField()
    marked_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item_id", "item_type"], name="searchdirty_one_per_item"
            )
        ]

    def __str__(self) -> str:
        return f"{self.item_type} {self.item_id} (dirty)"


class SearchChange(models.Model):
    """An item's vectors were replaced or removed: written in the same transaction as its
    ``SearchChunk`` rows, read by every process (``id`` past what its index reflects) to update
    its in-memory index in place. Kept an hour (``content.search.marks.changed`` prunes)."""

    id = models.BigAutoField(primary_key=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    item_type = models.CharField(max_length=10)
    item_id = models.UUIDField()
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["owner", "id"], name="searchchange_owner_id")]

    def __str__(self) -> str:
        return f"{self.item_type} {self.item_id} changed at {self.at}"
