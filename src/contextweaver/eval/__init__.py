"""Offline evaluation: replay recorded trajectories through strategies and measure what they kept."""
