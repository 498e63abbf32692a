"""Plane geometry shared by the scene renderer: homogeneous transforms, a tilted camera, polygon coverage.

>>> import numpy as np
>>> project(translation(2, 3) @ rotation(90), np.array([[1.0, 0.0]])).round(6).tolist()
[[2.0, 4.0]]
"""

from __future__ import annotations

import math

import cv2
import numpy as np

_SUBPIXEL_BITS = 4  # cv2.fillPoly fixed-point shift: 1/16 pixel precision for coverage fractions


def translation(dx: float, dy: float) -> np.ndarray:
    """A 3x3 homogeneous translation."""
    return np.array([[1, 0, dx], [0, 1, dy], [0, 0, 1]], np.float64)


def rotation(degrees: float) -> np.ndarray:
    """A 3x3 rotation about the origin, clockwise on screen (image y points down)."""
    angle = math.radians(degrees)
    cos, sin = math.cos(angle), math.sin(angle)
    return np.array([[cos, -sin, 0], [sin, cos, 0], [0, 0, 1]], np.float64)


def scaling(sx: float, sy: float | None = None) -> np.ndarray:
    """A 3x3 scaling about the origin."""
    return np.diag([sx, sx if sy is None else sy, 1.0])


def project(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Apply a 3x3 homography to an (N, 2) array of points."""
    homogeneous = np.hstack([points, np.ones((len(points), 1))]) @ matrix.T
    return homogeneous[:, :2] / homogeneous[:, 2:3]


def camera_homography(width: int, height: int, tilt: float, yaw: float, roll: float, focal: float) -> np.ndarray:
    """Where a camera tilted ``tilt`` degrees from looking straight down sees the points of a flat table.

    The table plane is given in the coordinates of the untilted image. A rotation of a camera about its
    centre maps a plane by ``K R K^-1``; the result is recentred and rescaled so that the middle of the table
    keeps its position and size, which keeps card sizes meaningful whatever the tilt.
    """
    intrinsics = np.array([[focal, 0, width / 2], [0, focal, height / 2], [0, 0, 1]], np.float64)
    tilt_rad, yaw_rad = math.radians(tilt), math.radians(yaw)
    tilt_matrix = np.array(
        [[1, 0, 0], [0, math.cos(tilt_rad), -math.sin(tilt_rad)], [0, math.sin(tilt_rad), math.cos(tilt_rad)]]
    )
    yaw_matrix = np.array(
        [[math.cos(yaw_rad), 0, math.sin(yaw_rad)], [0, 1, 0], [-math.sin(yaw_rad), 0, math.cos(yaw_rad)]]
    )
    homography = intrinsics @ tilt_matrix @ yaw_matrix @ np.linalg.inv(intrinsics)
    homography = homography @ translation(width / 2, height / 2) @ rotation(roll) @ translation(-width / 2, -height / 2)
    centre = np.array([[width / 2, height / 2], [width / 2 + 1, height / 2], [width / 2, height / 2 + 1]])
    mapped = project(homography, centre)
    jacobian = np.array([mapped[1] - mapped[0], mapped[2] - mapped[0]])
    scale = 1 / math.sqrt(abs(np.linalg.det(jacobian)))
    recentre = translation(width / 2, height / 2) @ scaling(scale) @ translation(-mapped[0][0], -mapped[0][1])
    result: np.ndarray = recentre @ homography
    return result / result[2, 2]


def polygon_mask(polygon: np.ndarray, origin: tuple[int, int], size: tuple[int, int]) -> np.ndarray:
    """A uint8 mask (1 inside) of ``size`` (width, height) with ``polygon`` drawn relative to ``origin``."""
    mask = np.zeros((size[1], size[0]), np.uint8)
    points = np.round((polygon - np.array(origin)) * (1 << _SUBPIXEL_BITS)).astype(np.int32)
    cv2.fillPoly(mask, [points], 1, lineType=cv2.LINE_8, shift=_SUBPIXEL_BITS)
    return mask


def bounding_box(points: np.ndarray) -> tuple[float, float, float, float]:
    """The axis-aligned (x1, y1, x2, y2) box of a set of points."""
    return float(points[:, 0].min()), float(points[:, 1].min()), float(points[:, 0].max()), float(points[:, 1].max())
