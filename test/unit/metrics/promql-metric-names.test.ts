import { describe, expect, it } from "vitest";
import { exposedNames, promqlMetricNames } from "../../support/promql-metric-names.ts";

describe("promqlMetricNames", () => {
  it("finds the selected metrics, not functions, label names, label values, ranges or keywords", () => {
    expect(
      promqlMetricNames(
        'histogram_quantile(0.99, sum by (le) (rate(a_seconds_bucket{route="/x{y}"}[5m]))) ' +
          "/ on(instance) group_left(version) b_info offset 5m and bool c_total",
      ),
    ).toEqual(["a_seconds_bucket", "b_info", "c_total"]);
    expect(promqlMetricNames("max by (state) (sum by (instance, state) (shoal_jobs))")).toEqual(["shoal_jobs"]);
  });
});

describe("exposedNames", () => {
  it("lists each sample name of an exposition once, a histogram's series by their own names", () => {
    const text = [
      "# HELP h_seconds x",
      "# TYPE h_seconds histogram",
      'h_seconds_bucket{le="1"} 0',
      "h_seconds_sum 0",
      "h_seconds_count 0",
      'g{a="b"} 1',
      'g{a="c"} 2',
    ].join("\n");
    expect([...exposedNames(text)]).toEqual(["h_seconds_bucket", "h_seconds_sum", "h_seconds_count", "g"]);
  });
});
