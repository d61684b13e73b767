import { describe, expect, it } from "vitest";
import { rowWindow, windowAround } from "../../../ui/src/common/row-window.ts";

describe("the rows a virtual table draws", () => {
  it("are those on screen and ten either side, within the rows there are", () => {
    expect(rowWindow(0, 360, 36, 1_000)).toEqual({ first: 0, last: 20 });
    expect(rowWindow(3_600, 360, 36, 1_000)).toEqual({ first: 90, last: 120 });
    expect(rowWindow(35_640, 360, 36, 1_000)).toEqual({ first: 980, last: 1_000 });
  });

  it("reach ten rows past a focused row the scroll has not yet caught up with, either way", () => {
    const window = { first: 40, last: 70 };
    expect(windowAround(window, 69, 1_000)).toEqual({ first: 40, last: 80 });
    expect(windowAround(window, 40, 1_000)).toEqual({ first: 30, last: 70 });
    expect(windowAround(window, 55, 1_000)).toEqual(window);
    expect(windowAround({ first: 980, last: 1_000 }, 999, 1_000)).toEqual({ first: 980, last: 1_000 });
  });

  it("do not follow a focus the reader scrolled far away from, nor a table without one", () => {
    const window = { first: 400, last: 430 };
    expect(windowAround(window, 12, 1_000)).toEqual(window);
    expect(windowAround(window, 900, 1_000)).toEqual(window);
    expect(windowAround(window, null, 1_000)).toEqual(window);
  });
});
