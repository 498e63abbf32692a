"""From camera frames to recognised cards per player. Only ``detector.py`` imports ultralytics."""
