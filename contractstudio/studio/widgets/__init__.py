"""Widgets of the studio's screens."""
