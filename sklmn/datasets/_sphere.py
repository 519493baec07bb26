"""Readers of the NIST SPHERE and RIFF (WAVE) audio files of TIMIT."""

from __future__ import annotations

import io
import wave

import numpy as np

__all__ = ["read_sphere", "read_audio"]

_SPHERE_MAGIC = b"NIST_1A\n"


def _header_fields(text: str, source: str) -> dict:
    fields = {}
    for line in text.splitlines()[2:]:
        line = line.strip()
        if line == "end_head":
            return fields
        if not line or line.startswith(";"):
            continue
        parts = line.split(None, 2)
        if len(parts) < 3 or not parts[1].startswith("-"):
            raise ValueError(f"{source}: malformed SPHERE header line {line!r}.")
        key, kind, value = parts
        if kind == "-i":
            fields[key] = int(value)
        elif kind == "-r":
            fields[key] = float(value)
        elif kind.startswith("-s"):
            fields[key] = value
        else:
            raise ValueError(
                f"{source}: unknown SPHERE field type {kind!r} in {line!r}."
            )
    raise ValueError(f"{source}: the SPHERE header has no end_head line.")


def read_sphere(data: bytes, source: str = "the file"):
    """Decode a NIST SPHERE file of uncompressed 16-bit PCM samples.

    The header is ``NIST_1A``, the header size in bytes (1024 for TIMIT) and
    ``key -type value`` lines up to ``end_head``; the samples follow the
    header. Only one channel of 2-byte linear PCM (``sample_coding`` absent
    or ``pcm``) is read; files compressed with ``shorten`` (the LDC CD-ROM
    of some corpora) must be decompressed first, with the NIST tool
    ``sph2pipe``.

    Parameters
    ----------
    data : bytes
        The file's contents.
    source : str, default="the file"
        Name of the file in error messages.

    Returns
    -------
    samples : ndarray of shape (n_samples,), int16
    sample_rate : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.datasets._sphere import read_sphere
    >>> lines = ["NIST_1A", "   1024", "sample_rate -i 16000",
    ...          "sample_n_bytes -i 2", "channel_count -i 1",
    ...          "sample_byte_format -s2 01", "sample_count -i 3", "end_head"]
    >>> header = "\\n".join(lines).encode().ljust(1024)
    >>> samples, rate = read_sphere(header + np.array([1, -2, 3], "<i2").tobytes())
    >>> samples.tolist(), rate
    ([1, -2, 3], 16000)
    """
    if not data.startswith(_SPHERE_MAGIC):
        raise ValueError(f"{source} is not a NIST SPHERE file (no NIST_1A header).")
    try:
        header_size = int(data[8:16].decode("ascii").strip())
        text = data[:header_size].decode("latin1")
    except ValueError as exc:
        raise ValueError(f"{source}: malformed SPHERE header size.") from exc
    fields = _header_fields(text, source)
    coding = str(fields.get("sample_coding", "pcm")).lower()
    if "shorten" in coding:
        raise ValueError(
            f"{source} is compressed with shorten (sample_coding {coding!r}): "
            "decompress it first with NIST's sph2pipe (sph2pipe -f sph IN OUT, "
            "or -f wav for a RIFF file)."
        )
    if coding != "pcm":
        raise ValueError(
            f"{source} has sample_coding {coding!r}: only 16-bit linear PCM is read."
        )
    width = fields.get("sample_n_bytes", 2)
    channels = fields.get("channel_count", 1)
    if width != 2 or channels != 1:
        raise ValueError(
            f"{source} has {channels} channel(s) of {width}-byte samples: only "
            "one channel of 2-byte samples is read."
        )
    order = str(fields.get("sample_byte_format", "01"))
    if order not in ("01", "10"):
        raise ValueError(
            f"{source} has sample_byte_format {order!r}: expected '01' (little "
            "endian) or '10' (big endian)."
        )
    if "sample_rate" not in fields:
        raise ValueError(f"{source}: the SPHERE header has no sample_rate.")
    body = data[header_size:]
    count = fields.get("sample_count", len(body) // 2)
    if len(body) < 2 * count:
        raise ValueError(
            f"{source} declares {count} samples but holds {len(body) // 2}."
        )
    dtype = "<i2" if order == "01" else ">i2"
    samples = np.frombuffer(body, dtype=dtype, count=count).astype(np.int16)
    return samples, int(fields["sample_rate"])


def read_audio(path):
    """Read a TIMIT audio file: NIST SPHERE or RIFF WAVE, 16-bit mono PCM.

    Returns ``(samples, sample_rate)`` with int16 samples.

    Examples
    --------
    >>> import tempfile, wave
    >>> from pathlib import Path
    >>> from sklmn.datasets._sphere import read_audio
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "a.wav"
    ...     with wave.open(str(path), "wb") as w:
    ...         w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000)
    ...         w.writeframes(b"\\x01\\x00\\xff\\xff")
    ...     read_audio(path)[0].tolist()
    [1, -1]
    """
    data = path.read_bytes()
    if data.startswith(_SPHERE_MAGIC):
        return read_sphere(data, source=repr(str(path)))
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        try:
            with wave.open(io.BytesIO(data)) as stream:
                width, channels = stream.getsampwidth(), stream.getnchannels()
                rate = stream.getframerate()
                frames = stream.readframes(stream.getnframes())
        except (wave.Error, EOFError) as exc:
            raise ValueError(
                f"{str(path)!r} is not a readable WAVE file: {exc}"
            ) from exc
        if width != 2 or channels != 1:
            raise ValueError(
                f"{str(path)!r} has {channels} channel(s) of {width}-byte samples: "
                "only one channel of 16-bit PCM is read."
            )
        return np.frombuffer(frames, dtype="<i2").astype(np.int16), rate
    raise ValueError(
        f"{str(path)!r} is neither a NIST SPHERE (NIST_1A) nor a RIFF WAVE file."
    )
