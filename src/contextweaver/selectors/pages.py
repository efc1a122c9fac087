"""The page an agent reads next: an agent paging through a file (`--view_range 1300 1350`, then
`1350 1400`) types the bounds of a nearby page, numbers it read in an older view of that file. An older
view offers those lines (select.py) as part of its outline, each alone."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from contextweaver.nodes.views import same_file

PAGES = 3
"""An older view of a file offers its lines whose numbers lie within PAGES widths of a range a recent view of
it showed, on either side, each alone: an agent paging through a file types next the bounds of a nearby page.
Set on the train splits (docs/TUNING.md)."""
PAGE_STEP = 10
"""Only round line numbers are bounds an agent types (multiples of this); 5 gave the same for more lines
(docs/TUNING.md)."""
MIN_PAGE = 10
"""A range narrower than this counts as this wide (a 2-line view, a `grep -n` hit, still pages by tens);
20 gave the same (docs/TUNING.md)."""
PAGE_WEIGHT = 4.0
"""A page line's score at the range's edge, falling as w / (w + distance) (an outline line scores 1). Set on
the train splits (docs/TUNING.md)."""


def page_lines(
    path: str | None, numbers: Mapping[int, int] | None, pages: tuple[tuple[str, int, int], ...]
) -> tuple[tuple[int, float], ...]:
    """The lines of an older view of `path` (file line number -> view line: `numbers`) whose numbers
    bracket a range recent views of its file showed (`pages`: path, first, last): round numbers within
    PAGES widths on either side, each valued by how close it is to the range."""
    if path is None or not numbers:
        return ()
    found: dict[int, float] = {}
    for page, first, last in pages:
        if not same_file(path, page):
            continue
        width = max(MIN_PAGE, last - first)
        low, high = first - PAGES * width, last + PAGES * width
        rounds = range(low + (-low) % PAGE_STEP, high + 1, PAGE_STEP)
        wanted: Iterable[int] = rounds
        if len(rounds) > len(numbers):  # a wide recent range: read the view's numbers instead
            wanted = [n for n in numbers if low <= n <= high and n % PAGE_STEP == 0]
        for number in wanted:
            line = numbers.get(number)
            if line is None or first <= number <= last:
                continue
            distance = first - number if number < first else number - last
            found[line] = max(found.get(line, 0.0), PAGE_WEIGHT * width / (width + distance))
    return tuple(sorted(found.items()))
