"""MP4 files of rendered episodes, written and read with PyAV (FFmpeg's libraries)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

CODEC = "libx264"  # H.264: plays in browsers, VS Code and every video player


class Mp4Writer:
    """Streams RGB frames (height, width, 3, uint8) into an H.264 MP4, one at a time, so a
    long episode never sits in memory.

    The frames go to a hidden partial file beside `path`, which replaces `path` only when
    the recording ends well (`close`): a run that fails or is stopped midway leaves an
    earlier video at `path` as it was, not a truncated one (`discard` removes the partial)."""

    def __init__(self, path: Path, fps: int = 30) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.fps = fps
        self.frames = 0
        # Same folder, so the final rename stays on one file system; the suffix tells
        # FFmpeg the container.
        self.partial = path.with_name(f".{path.stem}.partial{path.suffix}")
        import av  # here, not at the top: FFmpeg's libraries load only when a video is made

        self._av = av
        self._container = av.open(str(self.partial), mode="w")
        self._stream: Any = None

    def add(self, frame: np.ndarray) -> None:
        if self._stream is None:
            self._stream = self._container.add_stream(CODEC, rate=self.fps)
            # yuv420p (what players expect) needs even sides; frames get padded to them.
            self._stream.height, self._stream.width = (_even(n) for n in frame.shape[:2])
            self._stream.pix_fmt = "yuv420p"
        padded = _pad(frame, self._stream.height, self._stream.width)
        self._container.mux(
            self._stream.encode(self._av.VideoFrame.from_ndarray(padded, format="rgb24"))
        )
        self.frames += 1

    def close(self) -> None:
        """Finish the file and put it at `path`, replacing what was there."""
        if self._stream is not None:
            self._container.mux(self._stream.encode())  # flush the encoder's buffered frames
        self._container.close()
        os.replace(self.partial, self.path)

    def discard(self) -> None:
        """Drop the recording: `path` keeps what it held before."""
        try:
            self._container.close()
        finally:
            self.partial.unlink(missing_ok=True)

    def __enter__(self) -> Mp4Writer:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if kind is None:
            self.close()
        else:
            self.discard()


def write_mp4(frames: Iterable[np.ndarray], path: Path, fps: int = 30) -> int:
    """Write RGB frames as an H.264 MP4; returns the frame count."""
    with Mp4Writer(path, fps) as writer:
        for frame in frames:
            writer.add(frame)
    return writer.frames


def count_frames(path: Path) -> int:
    """Frames in a video file, counted by decoding it (container headers can be wrong)."""
    import av

    with av.open(str(path)) as container:
        return sum(1 for _ in container.decode(video=0))


def _even(n: int) -> int:
    return n + n % 2


def _pad(frame: np.ndarray, height: int, width: int) -> np.ndarray:
    frame = np.ascontiguousarray(frame[..., :3], dtype=np.uint8)
    rows, cols = height - frame.shape[0], width - frame.shape[1]
    return np.pad(frame, ((0, rows), (0, cols), (0, 0))) if rows or cols else frame
