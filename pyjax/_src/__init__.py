"""pyjax's machinery. Nothing here is public API; see DESIGN.md for the layers."""
