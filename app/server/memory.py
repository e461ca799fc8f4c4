"""Freed memory handed back to the operating system, and the objects that live as long as the
server kept out of Python's full collections.

glibc keeps what a process freed for its own later use, and returns it to the system only from
the top of each arena (and only what is above the trim threshold) or when asked with
malloc_trim. A long input's forward pass frees hundreds of MB of blocks below the mmap
threshold (`attnlens serve` fixes it at 32 MiB, app/cli/serve.py): its activations and the
temporaries of the summaries, between which the record's own arrays stay. Without a trim the
server kept all of it for as long as it ran: on Llama-3.2-1B's shape (hidden 512) at 8,192
tokens a trace added 820 MB to the process for a record of 368 MB, 380 MB once trimmed (at
2,048: 280 MB for 116 MB, 127 MB once trimmed). A trim that finds little to give back costs
well under a millisecond.

Python's cyclic collector walks every object it tracks in each full collection, and it starts
one by itself once enough objects have outlived the younger ones: with torch, transformers,
Streamlit and a model loaded, about 470k objects, 230-250 ms on an idle core: most of the time
budget of a zoom at 8,192 tokens (300 ms, its own work about 20 ms) whenever one lands in it.
The libraries and the models loaded are never garbage, so once a model is loaded they are
frozen (gc.freeze): a full collection walks only what came later. Frozen objects are thawed
first at the next model loaded, so a model evicted since is collected then.
"""

from __future__ import annotations

import gc

from attnlens.model.heap import give_back


def freeze_long_lived() -> None:
    """Collect what is garbage now, then take every object left out of later full collections
    (those frozen before included: thawed first, so what became garbage since goes too)."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def give_back_memory() -> None:
    """Return freed heap memory to the operating system (model/heap.py's give_back: glibc's
    malloc_trim; elsewhere a no-op)."""
    give_back()
