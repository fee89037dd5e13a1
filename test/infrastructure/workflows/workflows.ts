/** The repository's GitHub Actions workflows, read as YAML for the tests that check them against the code. */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';

export const WORKFLOW_DIR = path.join(__dirname, '..', '..', '..', '.github', 'workflows');

export interface Step {
  readonly uses?: string;
  readonly run?: string;
  readonly with?: Record<string, unknown>;
}

export interface Job {
  readonly permissions?: Record<string, string>;
  readonly environment?: string;
  readonly needs?: string | string[];
  readonly steps: readonly Step[];
}

export interface Workflow {
  readonly file: string;
  readonly text: string;
  readonly on: unknown;
  readonly permissions?: Record<string, string>;
  readonly concurrency?: unknown;
  readonly jobs: Record<string, Job>;
}

export function workflowFiles(): string[] {
  return readdirSync(WORKFLOW_DIR)
    .filter((file) => /\.ya?ml$/.test(file))
    .sort();
}

export function readWorkflow(file: string): Workflow {
  const text = readFileSync(path.join(WORKFLOW_DIR, file), 'utf8');
  return { file, text, ...(parse(text) as Omit<Workflow, 'file' | 'text'>) };
}

/** Every command line of every `run:` step, continuation lines joined, comments left out. */
export function commandLines(workflow: Workflow): string[] {
  return Object.values(workflow.jobs)
    .flatMap((job) => job.steps)
    .flatMap((step) => (step.run ?? '').replace(/\\\n\s*/g, ' ').split('\n'))
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** A command line's words, as a shell without expansions splits them (the workflows quote nothing). */
export function words(line: string): string[] {
  return line.split(/\s+/).filter((word) => word !== '');
}
