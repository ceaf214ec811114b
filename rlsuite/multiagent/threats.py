"""The squares that would complete four in a row, for each player, computed from a batch of
connect-four boards by convolution.

AlphaGo's policy network read tactical features beside the stones (Silver et al. 2016,
extended data table 2: capture size, self-atari size, ladder capture), computed from the
board by rule because they are exactly known and costly to learn. The connect-four
counterpart is the set of squares where a piece would make four: one window of four
squares in a line holding three of a player's pieces and one empty square marks that
square. Every window is found at once by a convolution with the four line kernels, and a
transposed convolution with the same kernels hands each marked window back to its squares,
so a batch costs a few small convolutions on the learner and the env runners alike.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

CONNECT = 4


def _line_kernels() -> list[torch.Tensor]:
    """Horizontal, vertical, diagonal and anti-diagonal lines of four, as conv2d weights."""
    diagonal = torch.eye(CONNECT)
    kernels = [torch.ones(1, CONNECT), torch.ones(CONNECT, 1), diagonal, diagonal.flip(-1)]
    return [kernel.view(1, 1, *kernel.shape) for kernel in kernels]


_KERNELS = _line_kernels()


def completing_squares(pieces: torch.Tensor, empty: torch.Tensor) -> torch.Tensor:
    """For boards (batch, rows, columns): 1 on each empty square where one more of `pieces`'
    player's pieces would complete a line of four, whether or not a piece can land there
    yet."""
    pieces, empty = pieces.unsqueeze(1), empty.unsqueeze(1)
    covered = torch.zeros_like(pieces)
    for kernel in _KERNELS:
        kernel = kernel.to(pieces)
        three_and_a_gap = (F.conv2d(pieces, kernel) == CONNECT - 1) & (F.conv2d(empty, kernel) == 1)
        covered = covered + F.conv_transpose2d(three_and_a_gap.to(pieces), kernel)
    return ((covered > 0).to(pieces) * empty).squeeze(1)


def landing_squares(occupied: torch.Tensor) -> torch.Tensor:
    """For boards (batch, rows, columns), row 0 the top: 1 on the square a piece dropped in
    each column that is not full comes to rest on."""
    floor = torch.ones_like(occupied[..., :1, :])
    below_is_filled = torch.cat([occupied[..., 1:, :], floor], dim=-2)
    return (1.0 - occupied) * below_is_filled


__all__ = ["CONNECT", "completing_squares", "landing_squares"]
