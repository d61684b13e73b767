import { defineConfig } from "vite";

/**
 * The console's bundle (scripts/build.mjs builds it into dist/ui with the rest). No framework plugin: Vite's own
 * transform compiles the JSX for Preact (ui/tsconfig.json's jsxImportSource). `npx vite ui` serves it for
 * development, with the API proxied to a local `shoal serve`.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: "/ui/",
  build: { outDir: "../dist/ui", emptyOutDir: true, target: "es2022", sourcemap: true },
  server: { proxy: { "/api": { target: "https://localhost:1234", secure: false } } },
});
