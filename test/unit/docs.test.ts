import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { API_TAGS } from "../../src/api/api-tags.ts";
import { CONFIG_KEYS } from "../../src/config/keys.ts";
import { ENTITY_EVENTS } from "../../src/events/catalog/entity-events.ts";
import { EXECUTION_EVENT_TYPES } from "../../src/events/catalog/execution-events.ts";
import { JOB_EVENT_TYPES } from "../../src/events/catalog/job-events.ts";
import { NODE_EVENT_TYPES } from "../../src/events/catalog/node-events.ts";
import {
  NODE_REACTION_RECORD_SCHEMAS,
  NODE_REACTION_RECORD_TYPES,
} from "../../src/events/catalog/node-reaction-records.ts";
import {
  WORKFLOW_STEP_SCHEMAS,
  WORKFLOW_STEP_TYPES,
  WorkflowStepCommand,
  WorkflowStepInput,
} from "../../src/events/catalog/workflow-steps.ts";
import { ERROR_KINDS } from "../../src/errors/shoal-error.ts";

const doc = (name: string) => readFileSync(join(import.meta.dirname, "../../docs", name), "utf8");

describe("docs stay true to the code", () => {
  it("documents every config key", () => {
    const ops = doc("operations.md");
    for (const key of Object.keys(CONFIG_KEYS)) expect(ops, key).toContain(`\`${key}\``);
  });

  it("documents every event type of every entity kind (node, job, execution, and any kind registered after)", () => {
    const events = doc("events.md");
    const types = ENTITY_EVENTS.flatMap((kind) => Object.keys(kind.versions));
    for (const type of [...NODE_EVENT_TYPES, ...JOB_EVENT_TYPES, ...EXECUTION_EVENT_TYPES])
      expect(types).toContain(type);
    for (const type of types) expect(events, type).toContain(`\`${type}\``);
  });

  it("documents every node-reactions record with its fields", () => {
    const events = doc("events.md");
    for (const type of NODE_REACTION_RECORD_TYPES) {
      const row = events.split("\n").find((line) => line.startsWith(`| \`${type}\` |`));
      expect(row, type).toBeDefined();
      for (const field of Object.keys(NODE_REACTION_RECORD_SCHEMAS[type].fields))
        expect(row, `${type}.${field}`).toContain(field);
    }
  });

  it("documents the workflows' step record with its fields, those of its input and commands too", () => {
    const events = doc("events.md");
    for (const type of WORKFLOW_STEP_TYPES) {
      const row = events.split("\n").find((line) => line.startsWith(`| \`${type}\` |`));
      expect(row, type).toBeDefined();
      const fields = [
        ...Object.keys(WORKFLOW_STEP_SCHEMAS[type].fields),
        ...Object.keys(WorkflowStepInput.fields),
        ...Object.keys(WorkflowStepCommand.fields),
      ];
      for (const field of fields) expect(row, `${type}.${field}`).toContain(field);
    }
  });

  it("describes every tag the API's operations are grouped by", () => {
    const api = doc("api.md");
    for (const tag of Object.keys(API_TAGS)) expect(api, tag).toContain(`| \`${tag}\` |`);
  });

  it("documents every error kind", () => {
    const ops = doc("operations.md");
    for (const kind of ERROR_KINDS) expect(ops, kind).toContain(`\`${kind}\``);
  });
});
