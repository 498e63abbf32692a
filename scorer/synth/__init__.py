"""Synthetic training data: card faces rendered from free SVG decks, composited into table scenes.

The detector learns corner indices (rank glyph + suit pip), so every module here keeps track of where each
face's indices are (``faces``), where they land in a rendered scene and whether they stay visible (``scene``).
Nothing here imports torch or ultralytics.
"""
