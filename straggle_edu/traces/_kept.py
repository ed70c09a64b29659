"""Arrays kept while a large trace is read and analysed, out of the way of the arrays that come and go.

:class:`Slab`
    copies of arrays, in slabs mapped apart from the C library's heap;
:class:`KeptRows`
    rows picked from batch after batch (the program sample), kept as numpy columns in a slab.
"""

from __future__ import annotations

import numpy as np

from ._table import arrow_array, arrow_numpy

__all__ = ["Slab", "KeptRows", "SLAB_BYTES"]

SLAB_BYTES = 64 * 2**20  # over glibc's largest mmap threshold (32 MiB): mapped apart from the heap


class Slab:
    """Arrays kept until the end of an analysis, copied into slabs of at least :data:`SLAB_BYTES`.

    A large trace's analysis keeps a little of every batch it reads (the program sample's rows) and of every block
    it models (the block's work and microbatches), while it allocates and frees the next one's arrays. Kept in the
    C library's heap among them, the kept arrays split its free space, the next batch's arrays no longer fit
    there, and the heap grows: fresh pages, each a page fault. A slab this large is mapped apart from
    the heap (glibc maps any allocation over 32 MiB on its own), so the heap is left to the transient arrays and
    reused batch after batch. On the 16,384-rank x 50-step trace, with the kept work in memory, this (with
    :class:`KeptRows`, the medians' values no longer kept beside the work they are taken from, and each block let
    go before the next) took ``analyze``'s page faults from about 500,000 to 245,000 and its peak from 1.9 to
    0.9 GB.

    Examples
    --------
    >>> slab = Slab(64)
    >>> a = slab.keep(np.arange(5.0))
    >>> b = slab.keep(np.arange(6).reshape(2, 3))
    >>> a.tolist(), b.tolist(), len(slab.slabs)
    ([0.0, 1.0, 2.0, 3.0, 4.0], [[0, 1, 2], [3, 4, 5]], 2)
    """

    def __init__(self, size=None):
        self.size = SLAB_BYTES if size is None else size
        self.slabs, self._free = [], 0

    def keep(self, arr):
        """A copy of ``arr`` in a slab."""
        arr = np.asarray(arr)
        n = arr.nbytes + arr.dtype.alignment
        if n > self._free:
            self.slabs.append(np.empty(max(self.size, n), dtype=np.uint8))
            self._free = self.slabs[-1].nbytes
        slab = self.slabs[-1]
        at = -(-(slab.nbytes - self._free) // arr.dtype.alignment) * arr.dtype.alignment
        out = slab[at:at + arr.nbytes].view(arr.dtype).reshape(arr.shape)
        out[...] = arr
        self._free = slab.nbytes - at - arr.nbytes
        return out


class KeptRows:
    """Rows picked from batch after batch, kept as numpy arrays in a :class:`Slab` until the reading ends.

    Kept as pyarrow tables, each batch's picked rows also keep small C++ objects in the heap among the batch's
    large arrays, which split its free space as the kept arrays do (:class:`Slab`): on the 16,384-rank x 50-step
    trace the program sample's reading faulted in about 250,000 pages rather than 90,000. The columns that are not
    integers, floats or dictionary codes without missing cells (strings of a CSV file) are kept as pyarrow arrays.

    Examples
    --------
    >>> import numpy as np, pyarrow as pa
    >>> rows = KeptRows()
    >>> for part in (["x", "y"], ["y", "z"]):
    ...     batch = pa.record_batch({"a": [1.5, 2.5], "b": pa.array(part).dictionary_encode(), "c": part})
    ...     rows.add(batch, np.array([True, False]))
    >>> [t.to_pydict() for t in rows.tables()]
    [{'a': [1.5, 1.5], 'b': ['x', 'y'], 'c': ['x', 'y']}]
    """

    def __init__(self):
        self.slab, self.schema, self.columns = Slab(), None, None

    def add(self, batch, mask):
        """Keep the rows of ``batch`` (a pyarrow RecordBatch or Table) where ``mask`` is True."""
        import pyarrow as pa

        if not mask.any():
            return
        if isinstance(batch, pa.Table):
            batch = batch.combine_chunks().to_batches()[0]
        if self.schema is None:
            self.schema, self.columns = batch.schema, [[] for _ in batch.schema]
        for i, col in enumerate(batch.columns):
            if pa.types.is_dictionary(col.type) and not col.indices.null_count:
                kept = (self.slab.keep(arrow_numpy(col.indices)[mask]), col.dictionary.to_pylist())
            elif (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)) and not col.null_count:
                kept = self.slab.keep(arrow_numpy(col)[mask])
            else:
                kept = col.filter(pa.array(mask))
            self.columns[i].append(kept)

    def tables(self):
        """The kept rows as a list of one pyarrow Table, in the order they were added (none: an empty list)."""
        import pyarrow as pa

        if self.schema is None:
            return []
        arrays = []
        for field, pieces in zip(self.schema, self.columns):
            chunks = []
            for piece in pieces:
                if isinstance(piece, tuple):
                    piece = pa.DictionaryArray.from_arrays(arrow_array(piece[0], field.type.index_type),
                                                           arrow_array(piece[1], field.type.value_type))
                elif isinstance(piece, np.ndarray):
                    piece = arrow_array(piece, field.type)
                chunks.append(piece)
            arrays.append(pa.chunked_array(chunks, type=field.type))
        return [pa.Table.from_arrays(arrays, schema=self.schema)]
