"""What a webcam or phone does to a scene: uneven light, glare, shadows, blur, noise, colour casts.

Every effect takes a float32 BGR image (0..255) and a generator, and ``strength`` scales how far each one may
go (1 for training data, about 0.3 for scenes a recogniser must read reliably). No effect moves pixels, so
labels computed before the effects stay true; nothing is ever mirrored.
"""

from __future__ import annotations

import cv2
import numpy as np


def lighting_gradient(image: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """A lamp off to one side: brightness falling off linearly or radially across the frame."""
    height, width = image.shape[:2]
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    if rng.random() < 0.5:
        angle = rng.uniform(0, 2 * np.pi)
        ramp = (xs / width - 0.5) * np.cos(angle) + (ys / height - 0.5) * np.sin(angle)
    else:
        cx, cy = rng.uniform(0, width), rng.uniform(0, height)
        ramp = 0.5 - np.hypot(xs - cx, ys - cy) / max(width, height)
    gain = 1 + ramp * rng.uniform(0, 0.6) * strength
    result: np.ndarray = image * gain[:, :, None]
    return result


def soft_shadow(image: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """A blurred dark polygon: the shadow of a head, an arm or a lamp shade."""
    height, width = image.shape[:2]
    mask: np.ndarray = np.zeros((height, width), np.float32)
    centre = np.array([rng.uniform(0, width), rng.uniform(0, height)])
    radius = rng.uniform(0.15, 0.5) * max(width, height)
    angles = np.sort(rng.uniform(0, 2 * np.pi, int(rng.integers(4, 9))))
    points = centre + np.stack([np.cos(angles), np.sin(angles)], 1) * radius * rng.uniform(0.5, 1.0, (len(angles), 1))
    cv2.fillPoly(mask, [points.astype(np.int32)], 1.0)
    blur = int(rng.uniform(0.02, 0.1) * max(width, height)) | 1
    mask = cv2.GaussianBlur(mask, (blur, blur), 0)
    result: np.ndarray = image * (1 - mask * rng.uniform(0.15, 0.5) * strength)[:, :, None]
    return result


def glare(image: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """A specular highlight: a bright, soft elliptical spot."""
    height, width = image.shape[:2]
    spot: np.ndarray = np.zeros((height, width), np.float32)
    centre = (int(rng.uniform(0, width)), int(rng.uniform(0, height)))
    axes = (int(rng.uniform(0.02, 0.12) * width), int(rng.uniform(0.02, 0.12) * width))
    cv2.ellipse(spot, centre, axes, rng.uniform(0, 180), 0, 360, 1.0, -1)
    blur = (max(axes) | 1) * 2 + 1
    spot = cv2.GaussianBlur(spot, (blur, blur), 0)
    result: np.ndarray = image + spot[:, :, None] * rng.uniform(60, 180) * strength
    return result


def colour_and_exposure(image: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """White balance off by up to ~20% per channel, brightness and contrast changes."""
    gains = 1 + rng.uniform(-0.2, 0.2, 3).astype(np.float32) * strength
    contrast = 1 + rng.uniform(-0.3, 0.25) * strength
    brightness = rng.uniform(-40, 30) * strength
    mean = float(image.mean())
    result: np.ndarray = (image * gains[None, None, :] - mean) * contrast + mean + brightness
    return result


def blur(image: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """Focus blur (Gaussian) or motion blur (a line kernel at a random angle)."""
    if rng.random() < 0.35:
        length = int(rng.uniform(3, 3 + 10 * strength))
        kernel: np.ndarray = np.zeros((length, length), np.float32)
        kernel[length // 2, :] = 1
        rotate = cv2.getRotationMatrix2D(((length - 1) / 2, (length - 1) / 2), rng.uniform(0, 180), 1)
        kernel = cv2.warpAffine(kernel, rotate, (length, length))
        return cv2.filter2D(image, -1, kernel / max(kernel.sum(), 1e-6))
    sigma = rng.uniform(0.3, 0.3 + 1.5 * strength)
    blurred = cv2.GaussianBlur(image, (0, 0), sigma)
    if rng.random() < 0.6:
        return blurred
    # shallow depth of field under a tilted camera: sharp on one band of the table, blurrier away from it
    ys = np.linspace(0, 1, image.shape[0], dtype=np.float32)[:, None, None]
    focus = rng.uniform(0.2, 0.8)
    weight = np.clip(np.abs(ys - focus) * rng.uniform(1.5, 3.0), 0, 1)
    result: np.ndarray = image * (1 - weight) + blurred * weight
    return result


def sensor_noise(image: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """Gaussian sensor noise, stronger in dark scenes as with a webcam's gain turned up."""
    sigma = rng.uniform(0, 10) * strength
    noise = rng.standard_normal(image.shape[:2], dtype=np.float32) * sigma
    result: np.ndarray = image + noise[:, :, None]
    return result


def apply_camera(image: np.ndarray, rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    """All camera effects, each drawn with its own probability, in the order light meets the sensor."""
    if rng.random() < 0.7:
        image = lighting_gradient(image, rng, strength)
    if rng.random() < 0.3 * strength:
        image = soft_shadow(image, rng, strength)
    if rng.random() < 0.25 * strength:
        image = glare(image, rng, strength)
    image = colour_and_exposure(image, rng, strength)
    if rng.random() < 0.6:
        image = blur(image, rng, strength)
    image = sensor_noise(image, rng, strength)
    return np.clip(image, 0, 255)
