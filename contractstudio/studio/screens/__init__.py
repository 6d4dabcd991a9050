"""The studio's screens: one per mode, plus dialogs."""
