import js from "@eslint/js";
import tseslint from "typescript-eslint";

const ONE_CLOCK =
  "wait on the deadline heap (DeadlineScheduler: set, every, sleep), not a timer of your own: a test's clock drives it";

export default tseslint.config(
  { ignores: ["node_modules/**", "dist/**", "dist.*/**", "coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts", "**/*.tsx"],
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": "off",
      // Prettier keeps code within 120 columns; this catches what it leaves alone (comments). Strings,
      // template literals and regular expressions stay whole: a message is easier to find in one piece.
      "max-len": [
        "error",
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true },
      ],
    },
  },
  {
    // Tests read untyped JSON bodies from the API and NATS.
    files: ["test/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    // One clock (docs/core.md, Deadlines and liveness): every wait of the orchestrator is a deadline on the one
    // deadline heap, so a test's clock drives it and a stop cancels it. Timers of their own stay where real time is
    // the point: the clock itself, the NATS transport, the CLI, a node's program (src/compute), the simulator, the
    // SQLite adapter's poll, and the bounds on shutdown steps (src/lifecycle).
    files: ["src/**/*.ts"],
    ignores: [
      "src/actors/clock.ts",
      "src/actors/deadline-scheduler.ts",
      "src/transport/**",
      "src/cli/**",
      "src/compute/**",
      "src/sim/**",
      "src/events/sqlite/**",
      "src/lifecycle/**",
    ],
    rules: {
      "no-restricted-globals": [
        "error",
        { name: "setTimeout", message: ONE_CLOCK },
        { name: "setInterval", message: ONE_CLOCK },
      ],
      "no-restricted-properties": [
        "error",
        { object: "globalThis", property: "setTimeout", message: ONE_CLOCK },
        { object: "globalThis", property: "setInterval", message: ONE_CLOCK },
        { object: "AbortSignal", property: "timeout", message: ONE_CLOCK },
      ],
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          paths: ["node:timers", "timers", "node:timers/promises", "timers/promises"].map((name) => ({
            name,
            importNames: ["setTimeout", "setInterval", "scheduler"],
            message: ONE_CLOCK,
          })),
        },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.property.name='setTimer']",
          message: `${ONE_CLOCK} (Clock.setTimer is the heap's own timer)`,
        },
      ],
    },
  },
  {
    // machines/ stay pure: no I/O, clock or randomness (ARCHITECTURE.md).
    files: ["machines/**/*.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["node:*"], message: "machines are pure" },
            { group: ["**/src/**"], allowTypeImports: true, message: "machines import event types only" },
          ],
        },
      ],
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: "machines are pure: the host supplies time" },
        { object: "Math", property: "random", message: "machines are pure: the host supplies ids" },
      ],
    },
  },
);
