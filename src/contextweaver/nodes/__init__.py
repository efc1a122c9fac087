"""A Step becomes a Node: facts and token counts extracted once, the views an output shows, its renderings, and the dependency graph the nodes form."""
