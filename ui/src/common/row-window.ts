/** Rows drawn beyond each edge of the scroller: enough that a quick scroll or Tab never meets a blank. */
const OVERSCAN = 10;

/** The rows [first, last) to draw for a scroller at `scrollTop`, `height` high, over `count` rows `rowPx` high. */
export function rowWindow(
  scrollTop: number,
  height: number,
  rowPx: number,
  count: number,
): { readonly first: number; readonly last: number } {
  const first = Math.max(0, Math.min(count, Math.floor(scrollTop / rowPx)) - OVERSCAN);
  const last = Math.min(count, Math.ceil((scrollTop + height) / rowPx) + OVERSCAN);
  return { first, last };
}

/**
 * The window widened to keep `focused` (a row index) and the rows either side of it drawn, so that Tab and Shift+Tab
 * find the next row's link even before the scroll that brings it on screen has been heard. A focus far from the
 * window (the reader scrolled away) is not followed: drawing every row between would defeat the window.
 */
export function windowAround(
  window: { readonly first: number; readonly last: number },
  focused: number | null,
  count: number,
): { readonly first: number; readonly last: number } {
  if (focused === null || focused < window.first - OVERSCAN || focused >= window.last + OVERSCAN) return window;
  return {
    first: Math.min(window.first, Math.max(0, focused - OVERSCAN)),
    last: Math.max(window.last, Math.min(count, focused + OVERSCAN + 1)),
  };
}
