// Loaded with `node --import` (through NODE_OPTIONS) into a `bin/shoal` under test: registers
// hooks.mjs, which appends the URL of every module the process resolves to the file named by
// SHOAL_TEST_IMPORT_LOG. Plain JavaScript, because the process under test runs without tsx.
import { register } from "node:module";
import process from "node:process";
import { URL } from "node:url";

register(new URL("./hooks.mjs", import.meta.url), { data: { log: process.env.SHOAL_TEST_IMPORT_LOG } });
