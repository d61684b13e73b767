/** Every sample of a Prometheus text exposition, keyed `name{labels}` exactly as printed. */
export function metricSamples(exposition: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of exposition.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const cut = line.lastIndexOf(" ");
    samples.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return samples;
}
