import type { CallBounds } from '../../shared/aws/bounded-client';

/** An environment as a tool reads it: the process's in bin/, a test's own in-process. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * An output stream as a tool is given one: a Node stream (process.stdout, whose write is confirmed by its callback
 * and whose 'error' can be caught), or a test's plain writer.
 */
export interface OutputStream {
  write(text: string, callback?: (error?: Error | null) => void): unknown;
  on?(event: 'error', listener: (error: Error) => void): unknown;
  /** A terminal: progress may be drawn in place. */
  readonly isTTY?: boolean;
}

/** What a tool's `run(argv, io)` reads and writes; bin/ passes the process's own, tests pass theirs. */
export interface ToolIo {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly env: Env;
  /**
   * Bounds for the tool's AWS clients; default the operator's (tools/common/aws-settings.ts). Tests against an
   * emulator on a busy machine pass looser ones.
   */
  readonly awsCallBounds?: CallBounds;
}
