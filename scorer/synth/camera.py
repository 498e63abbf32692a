"""What a webcam or phone does to a scene: uneven light, glare, shadows, blur, noise, colour casts, clipped
exposure, low resolution, the firmware's denoising smear or sharpening halos, dead pixels.

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
    cast = 0.2 if rng.random() < 0.8 else 0.4  # now and then a lamp or a screen tints everything
    gains = 1 + rng.uniform(-cast, cast, 3).astype(np.float32) * strength
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


def exposure_clipping(image: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """Auto-exposure gone too far: highlights blown to white (white paper and light glyphs merge) or
    shadows crushed to black."""
    if rng.random() < 0.6:
        return image * (1 + rng.uniform(0.2, 0.9) * strength)
    return (image - rng.uniform(10, 60) * strength) * (1 + rng.uniform(0, 0.3) * strength)


def low_resolution(image: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """A cheap sensor read out small and scaled up: soft edges and blocky glyphs."""
    height, width = image.shape[:2]
    factor = rng.uniform(0.4, 0.85) ** strength
    small = cv2.resize(image, (max(8, int(width * factor)), max(8, int(height * factor))), interpolation=cv2.INTER_AREA)
    interpolation = cv2.INTER_LINEAR if rng.random() < 0.7 else cv2.INTER_NEAREST
    return cv2.resize(small, (width, height), interpolation=interpolation)


def webcam_processing(image: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """What a webcam's firmware does after the sensor: denoising that smears fine detail into flat patches,
    or sharpening that rings around every edge (a small club's lobes blur into one blob either way)."""
    if rng.random() < 0.5:
        source = np.clip(image, 0, 255).astype(np.uint8)
        if rng.random() < 0.5:
            smeared = cv2.bilateralFilter(source, int(rng.integers(5, 10)), rng.uniform(20, 60), rng.uniform(3, 8))
        else:
            smeared = cv2.medianBlur(source, 3 if rng.random() < 0.7 else 5)
        return smeared.astype(np.float32)
    blurred = cv2.GaussianBlur(image, (0, 0), rng.uniform(0.8, 2.0))
    amount = rng.uniform(0.5, 2.0) * strength
    result: np.ndarray = image + (image - blurred) * amount
    return result


def salt_and_pepper(image: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """Dead and hot pixels (and the salt-and-pepper augmentation of exported photo datasets): isolated specks
    that a detector must not take for pips."""
    share = rng.uniform(0.0005, 0.012) * strength
    specks = rng.random(image.shape[:2]) < share
    result = image.copy()
    result[specks] = np.where(rng.random(int(specks.sum())) < 0.5, 0.0, 255.0)[:, None]
    return result


def sensor_noise(image: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """Gaussian sensor noise, stronger in dark scenes as with a webcam's gain turned up."""
    sigma = (rng.uniform(0, 10) if rng.random() < 0.8 else rng.uniform(10, 25)) * strength
    noise = rng.standard_normal(image.shape[:2], dtype=np.float32) * sigma
    result: np.ndarray = image + noise[:, :, None]
    return result


def fixed_grain(image: np.ndarray, rng: np.random.Generator, noise: float, specks: float) -> np.ndarray:
    """A uint8 BGR ``image`` with grey noise of standard deviation ``noise`` and a ``specks`` share of its pixels
    turned black or white: a webcam's grain at fixed levels, for a yardstick or a benchmark to measure against,
    where the effects above draw theirs at random for training."""
    grain = rng.normal(0.0, noise, image.shape[:2]).astype(np.float32)[:, :, None]
    noisy = np.clip(image.astype(np.float32) + grain, 0, 255).astype(np.uint8)
    draw = rng.random(noisy.shape[:2])
    noisy[draw < specks / 2] = 0
    noisy[draw > 1 - specks / 2] = 255
    return noisy


GREYSCALE_SHARE = 0.12
"""The share of training scenes taken in black and white: night-mode and infrared webcams, and photo datasets
exported with a greyscale augmentation (28 of rf-zk7wu-phone's 160 photos). Red suits then look black, so only
the pip's shape tells a heart from a spade; in colour alone the classifier read those hearts as spades."""


def greyscale(image: np.ndarray) -> np.ndarray:
    """The picture in black and white (luma), still three channels."""
    grey = cv2.cvtColor(np.clip(image, 0, 255).astype(np.float32), cv2.COLOR_BGR2GRAY)
    result: np.ndarray = np.repeat(grey[:, :, None], 3, axis=2)
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
    if rng.random() < 0.12 * strength:
        image = exposure_clipping(image, rng, strength)
    if rng.random() < 0.6:
        image = blur(image, rng, strength)
    if rng.random() < 0.2 * strength:
        image = low_resolution(image, rng, strength)
    image = sensor_noise(image, rng, strength)
    if rng.random() < 0.35 * strength:
        image = webcam_processing(image, rng, strength)
    if rng.random() < 0.15 * strength:
        image = salt_and_pepper(image, rng, strength)
    # drawn last, so that every scene drawn before keeps its looks
    if rng.random() < GREYSCALE_SHARE * strength:
        image = greyscale(image)
    return np.clip(image, 0, 255)
