"""The upstream: the woven request forwarded (forward), the upstream probed (health), its answer's token
usage read (usage).
"""
