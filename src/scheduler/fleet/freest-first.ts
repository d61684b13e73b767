import type { CandidateNode } from "../placement-request.ts";
import { selectDescending, type Leading } from "./peak-free.ts";

/** A job's candidate nodes with their weighted free capacity now, taken freest first (FleetIndex.freestCandidates). */
export class FreestFirst {
  constructor(
    private readonly nodes: readonly CandidateNode[],
    private readonly values: Float64Array,
  ) {}

  /**
   * The `size` freest (in no particular order; ties at the edge by position), and the most any other has (−1: none is
   * left).
   */
  take(size: number): Leading {
    const n = this.nodes.length;
    if (size >= n) return { nodes: this.nodes, values: [...this.values], rest: -1 };
    const threshold = selectDescending(this.values.slice(), size - 1);
    const nodes: CandidateNode[] = [];
    const values: number[] = [];
    let rest = -1;
    for (let i = 0; i < n; i++) {
      const w = this.values[i] as number;
      if (w > threshold) {
        nodes.push(this.nodes[i] as CandidateNode);
        values.push(w);
      } else if (w < threshold && w > rest) rest = w;
    }
    for (let i = 0; i < n; i++) {
      if (this.values[i] !== threshold) continue;
      if (nodes.length < size) {
        nodes.push(this.nodes[i] as CandidateNode);
        values.push(threshold);
      } else {
        rest = threshold;
        break;
      }
    }
    return { nodes, values, rest };
  }
}
