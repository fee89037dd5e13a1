import type { CallBounds } from '../../shared/aws/bounded-client';

/** An environment as a tool reads it: the process's in bin/, a test's own in-process. */
export type Env = Readonly<Record<string, string | undefined>>;

/** What a tool's `run(argv, io)` reads and writes; bin/ passes the process's own, tests pass theirs. */
export interface ToolIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: Env;
  /**
   * Bounds for the tool's AWS clients; default the operator's (tools/common/aws-settings.ts). Tests against an
   * emulator on a busy machine pass looser ones.
   */
  readonly awsCallBounds?: CallBounds;
}
