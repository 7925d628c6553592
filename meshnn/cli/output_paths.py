"""Where a command will write (``meshnn perf --out DIR``, ``--plot FILE.png``), checked when the
command line is read, before the script runs: a folder that cannot be made or written, or a
picture whose folder does not exist, is an argparse error (exit 2) naming it, not an OSError
after the whole run.  Checking writes and removes a small probe file, since permission bits say
nothing for root or on read-only mounts.

Layers: the standard library only.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path


def _probe(folder: Path) -> str | None:
    """Why a file cannot be written in the existing ``folder`` (None: it can)."""
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".meshnn-probe-"):
            pass
    except OSError as error:
        return error.strerror or str(error)
    return None


def output_folder(text: str) -> str:
    """An ``--out`` folder: existing and writable, or makeable under its nearest existing parent."""
    path = Path(text)
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} cannot be a folder: {str(existing)!r} is not a folder")
    why = _probe(existing)
    if why is not None:
        raise argparse.ArgumentTypeError(f"cannot write in {str(existing)!r} (for {text!r}): {why}")
    return text


def output_picture(text: str) -> str:
    """A ``--plot FILE.png``: a .png name whose folder exists and is writable, not a folder."""
    path = Path(text)
    if path.suffix.lower() != ".png":
        raise argparse.ArgumentTypeError(f"{text!r} must name a .png file")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder, not a .png file")
    folder = path.parent if str(path.parent) else Path(os.curdir)
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"the folder of {text!r} ({str(folder)!r}) does not exist")
    why = _probe(folder)
    if why is not None:
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: {why}")
    return text
