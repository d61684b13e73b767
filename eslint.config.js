import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/**", "dist/**", "dist.*/**", "coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
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
