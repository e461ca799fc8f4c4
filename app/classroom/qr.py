"""The join link as a QR code to project: a PNG drawn by segno (pure Python, no imaging library)."""

from __future__ import annotations

import io

MAX_LINK = 1000  # characters; a join link is far shorter, a QR code of more is unreadable


def qr_png(link: str, scale: int = 12) -> bytes:
    """PNG bytes of a QR code (error correction M) for link, black on white with a quiet zone."""
    import segno

    if not link or len(link) > MAX_LINK:
        raise ValueError(f"a join link must have 1 to {MAX_LINK} characters, got {len(link)}")
    code = segno.make(link, error="m", micro=False)
    out = io.BytesIO()
    code.save(out, kind="png", scale=scale, border=4, dark="black", light="white")
    return out.getvalue()
