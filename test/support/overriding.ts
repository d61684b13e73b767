/**
 * `target` seen through a proxy: the members `overrides` names are its, every other member is the target's own
 * (methods bound to the target, so they work on its private fields).
 */
export function overriding<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(t, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      const value: unknown = Reflect.get(t, property, t);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(t) : value;
    },
  });
}
